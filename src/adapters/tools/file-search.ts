/**
 * Listing files for find and grep: tinyglobby patterns over a gitignore-filtered walk. A pattern without `/` matches base names at any depth;
 * absolute patterns and `..` are refused; hidden files included, links not followed; results are sorted relative POSIX paths.
 * tinyglobby is imported on the first search, not when the tools are created.
 */
import { GitignoreFilter } from "./gitignore-filter.ts";

/** Options of {@link searchFiles}. */
export interface SearchFilesOptions {
  /** Absolute directory to search. */
  directory: string;
  /** Directory whose .gitignore files (and those below it) apply; usually the env root. */
  top: string;
  pattern: string;
  onlyFiles: boolean;
  signal?: AbortSignal;
}

/** The tinyglobby pattern for a user pattern, with fd's base-name semantics. @throws Error for absolute or `..` patterns. */
export function toGlobPattern(pattern: string): string {
  if (pattern.startsWith("/") || pattern.split("/").includes("..")) {
    throw new Error(`Pattern "${pattern}" must be relative to the search directory and must not contain "..".`);
  }
  if (pattern === "**" || pattern.startsWith("**/")) return pattern;
  return `**/${pattern}`;
}

/** Lists entries under `directory` matching `pattern`. See the module contract. */
export async function searchFiles(options: SearchFilesOptions): Promise<string[]> {
  const filter = new GitignoreFilter(options.top);
  const { glob } = await import("tinyglobby");
  const results = await glob(toGlobPattern(options.pattern), {
    cwd: options.directory,
    dot: true,
    onlyFiles: options.onlyFiles,
    followSymbolicLinks: false,
    expandDirectories: false,
    fs: filter.globFs(),
    ignore: ["**/.git", "**/.git/**"],
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return results.sort();
}

/**
 * Listing files for find and grep: tinyglobby patterns over a gitignore-filtered walk.
 *
 * Contract (ours; pattern semantics follow pi's use of `fd --glob`):
 * - a pattern without `/` matches the base name at any depth (`*.ts` → `**\/*.ts`); a pattern
 *   with `/` matches the path relative to the search directory, at any depth unless it starts
 *   with `**\/` (pi prefixes `**\/` in fd's full-path mode);
 * - patterns that are absolute or contain a `..` segment are refused (they could leave the root);
 * - hidden files are included; `.git` and gitignored entries are skipped (ignored directories are
 *   never walked); symbolic links are listed but not followed;
 * - results are relative POSIX paths, sorted, directories with a trailing `/` when included.
 *
 * @example
 * ```ts
 * const files = await searchFiles({ directory: env.cwd, top: env.root, pattern: "*.ts", onlyFiles: true, signal });
 * ```
 */
import { glob } from "tinyglobby";
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

/**
 * Lists entries under `directory` matching `pattern`. See the module contract.
 *
 * @example
 * ```ts
 * await searchFiles({ directory, top: directory, pattern: "src/**\/*.spec.ts", onlyFiles: true });
 * ```
 */
export async function searchFiles(options: SearchFilesOptions): Promise<string[]> {
  const filter = new GitignoreFilter(options.top);
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

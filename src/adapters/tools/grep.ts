/**
 * The `grep` tool: search file contents with a JavaScript regex or a literal (pi's parameters and texts). Files are searched in sorted order
 * through held handles (symlinks, escaping realpaths, extra hard links and binary files skipped); context windows are merged; lines clipped to
 * 500 chars; pi's limit notices.
 */
import { basename, join } from "node:path";
import { z } from "zod";
import { PathEscapeError } from "../../core/errors.ts";
import { defineTool, type AgentTool, type ToolResult } from "../../core/tools.ts";
import { HeldWalker } from "../beneath.ts";
import type { ExecutionEnv, OpenedFile } from "../execution-env.ts";
import { searchFiles } from "./file-search.ts";
import { abortable, statIfPresent, throwIfAborted } from "./tool-support.ts";
import { DEFAULT_MAX_BYTES, formatSize, GREP_MAX_LINE_LENGTH, truncateHead, truncateLine, type TruncationResult } from "./truncate.ts";

const DEFAULT_LIMIT = 100;
/** Files larger than this are skipped (bytes). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Parameters of the grep tool (pi's).
 * @example
 * grepParameters.parse({ pattern: "TODO", glob: "*.ts", context: 2 });
 */
export const grepParameters = z.object({
  pattern: z.string().describe("Search pattern (regex or literal string)"),
  path: z.string().optional().describe("Directory or file to search (default: current directory)"),
  glob: z.string().optional().describe("Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"),
  ignoreCase: z.boolean().optional().describe("Case-insensitive search (default: false)"),
  literal: z.boolean().optional().describe("Treat pattern as literal string instead of regex (default: false)"),
  context: z.number().optional().describe("Number of lines to show before and after each match (default: 0)"),
  limit: z.number().optional().describe("Maximum number of matches to return (default: 100)"),
});

/** Arguments of the grep tool. */
export type GrepToolInput = z.infer<typeof grepParameters>;

/** Details of a grep result (pi's). */
export interface GrepToolDetails {
  matchLimitReached?: number;
  truncation?: TruncationResult;
  linesTruncated?: boolean;
}

function compile(pattern: string, literal: boolean | undefined, ignoreCase: boolean | undefined): RegExp {
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&") : pattern;
  const flags = ignoreCase ? "i" : "";
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      throw new Error(`Invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`);
    }
  }
}

/**
 * Creates the `grep` tool bound to an execution env. See the module contract.
 * @example
 * const tool = createGrepTool(env);
 */
export function createGrepTool(env: ExecutionEnv): AgentTool<GrepToolInput, GrepToolDetails | undefined> {
  return defineTool({
    name: "grep",
    replay: "safe",
    label: "grep",
    description: `Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to ${DEFAULT_LIMIT} matches or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Long lines are truncated to ${GREP_MAX_LINE_LENGTH} chars.`,
    parameters: grepParameters,
    async execute(args, { signal }): Promise<ToolResult<GrepToolDetails | undefined>> {
      throwIfAborted(signal);
      return abortable(signal, async () => {
        const regex = compile(args.pattern, args.literal, args.ignoreCase);
        const shownPath = args.path || ".";
        const searchPath = await env.resolvePath(shownPath, "read");
        const stats = await statIfPresent(searchPath);
        if (!stats) throw new Error(`Path not found: ${searchPath}`);
        const contextLines = args.context && args.context > 0 ? Math.floor(args.context) : 0;
        const matcher = new Matcher(regex, contextLines, Math.max(1, Math.floor(args.limit ?? DEFAULT_LIMIT)));
        if (!stats.isDirectory()) {
          // One file: read the handle a symlink-refusing walk opened.
          const { handle } = await env.openFile(searchPath, { access: "read", path: shownPath });
          const buffer = await handle.readFile().finally(() => handle.close());
          matcher.search(buffer, basename(searchPath));
          return matcher.result();
        }
        const files = await searchFiles({ directory: searchPath, top: env.allowOutsideRoot ? searchPath : env.root, pattern: args.glob ?? "*", onlyFiles: true, signal });
        const directory = await env.openDirectory(searchPath, { access: "read", path: shownPath });
        const walker = new HeldWalker(directory);
        try {
          for (const relativePath of files) {
            if (matcher.limitReached) break;
            throwIfAborted(signal);
            const buffer = await readListed(env, walker, searchPath, relativePath);
            if (buffer) matcher.search(buffer, relativePath);
          }
        } finally {
          await walker.close();
          await directory.handle.close();
        }
        return matcher.result();
      });
    },
  });
}

/**
 * Reads a listed file through the held directory chain, never by path: a component swapped for a symlink after the listing is refused. A file that is
 * itself a symlink is read only when its target is inside the root (then by a fresh walk of the target). Unreadable, large, hard-linked or vanished
 * files are skipped (undefined).
 */
async function readListed(env: ExecutionEnv, walker: HeldWalker, searchPath: string, relativePath: string): Promise<Buffer | undefined> {
  let opened: OpenedFile | undefined;
  try {
    const { directory, name } = await walker.directoryOf(relativePath);
    opened = await env.openFileIn(directory, name, relativePath).catch(async (error: unknown) => {
      if (!PathEscapeError.isInstance(error) || (error.details as { component?: string } | undefined)?.component !== name) throw error;
      // The last component is a symlink: follow it only to a target the env allows.
      return env.openFile(await env.checkPath(join(searchPath, relativePath), "read"), { access: "read", path: relativePath });
    });
    if (!opened.stats.isFile() || opened.stats.size > MAX_FILE_BYTES) return undefined;
    return await opened.handle.readFile();
  } catch {
    return undefined; // a symlink leaving the root, a hard link, a component swapped, a file that vanished
  } finally {
    await opened?.handle.close();
  }
}

/** Collects matches over files in order, with context windows and the match limit. */
class Matcher {
  private readonly output: string[] = [];
  private matchCount = 0;
  limitReached = false;
  private linesTruncated = false;

  constructor(
    private readonly regex: RegExp,
    private readonly contextLines: number,
    private readonly limit: number,
  ) {}

  private clip(line: string): string {
    const clipped = truncateLine(line.replace(/\r/g, ""));
    if (clipped.wasTruncated) this.linesTruncated = true;
    return clipped.text;
  }

  /** Searches one file's bytes (binary files, NUL in the first 8 KiB, are skipped). */
  search(buffer: Buffer, shown: string): void {
    if (this.limitReached || buffer.subarray(0, 8192).includes(0)) return;
    const lines = buffer.toString("utf8").split("\n");
    // A trailing newline does not start another line (as in ripgrep).
    const lineCount = lines.length > 1 && lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
    const matched: number[] = [];
    for (let index = 0; index < lineCount; index += 1) {
      if (!this.regex.test(lines[index].endsWith("\r") ? lines[index].slice(0, -1) : lines[index])) continue;
      if (this.matchCount >= this.limit) {
        this.limitReached = true;
        break;
      }
      matched.push(index);
      this.matchCount += 1;
    }
    const matchSet = new Set(matched);
    let shownUntil = -1;
    for (const index of matched) {
      const start = Math.max(0, index - this.contextLines, shownUntil + 1);
      const end = Math.min(lineCount - 1, index + this.contextLines);
      for (let current = start; current <= end; current += 1) {
        this.output.push(matchSet.has(current) ? `${shown}:${current + 1}: ${this.clip(lines[current])}` : `${shown}-${current + 1}- ${this.clip(lines[current])}`);
      }
      shownUntil = Math.max(shownUntil, end);
    }
  }

  result(): ToolResult<GrepToolDetails | undefined> {
    if (this.output.length === 0) return { content: [{ type: "text", text: "No matches found" }], details: undefined };
    const truncation = truncateHead(this.output.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
    const details: GrepToolDetails = {};
    const notices: string[] = [];
    if (this.limitReached) {
      notices.push(`${this.limit} matches limit reached. Use limit=${this.limit * 2} for more, or refine pattern`);
      details.matchLimitReached = this.limit;
    }
    if (truncation.truncated) {
      notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
      details.truncation = truncation;
    }
    if (this.linesTruncated) {
      notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines`);
      details.linesTruncated = true;
    }
    const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
    return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
  }
}

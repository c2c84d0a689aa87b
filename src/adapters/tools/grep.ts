/**
 * The `grep` tool: search file contents.
 *
 * Contract (parameters and texts: pi 0.73.1 `grep`, `../shared/reference/pi-behaviour.md` §6.6;
 * implementation ours, no ripgrep needed):
 * - parameters `{ pattern, path?, glob?, ignoreCase?, literal?, context?, limit? }` (limit default 100);
 * - `pattern` is a JavaScript regular expression (Unicode mode when it parses so, else legacy
 *   mode), or a literal string with `literal: true`; an invalid pattern is an error naming it;
 * - searches the file at `path`, or every non-binary file under it: hidden files included,
 *   `.gitignore` honoured, `.git` skipped, symlinks not followed, files whose realpath leaves the
 *   root skipped; `glob` filters files as in find (`*.ts` matches base names at any depth);
 *   files are searched in sorted path order; binary files (NUL in the first 8 KiB) are skipped;
 * - output lines `file:N: text` for matches and `file-N- text` for context (overlapping context
 *   windows are merged, ours: pi repeats lines); paths relative to the search directory (the base
 *   name when `path` is a file); lines clipped to 500 chars;
 * - `No matches found` when empty; notices in one trailing bracket: `N matches limit reached. Use
 *   limit=2N for more, or refine pattern` (only when more exist), `50.0KB limit reached`,
 *   `Some lines truncated to 500 chars. Use read tool to see full lines`; details
 *   `{ matchLimitReached?, truncation?, linesTruncated? }`;
 * - `Path not found: ABS` when missing; PathEscapeError outside the root; honours the signal.
 *
 * @example
 * ```ts
 * await createGrepTool(env).execute({ pattern: "TODO", glob: "*.ts", context: 2 }, context);
 * ```
 */
import { readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { z } from "zod";
import { defineTool, type AgentTool, type ToolResult } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { searchFiles } from "./file-search.ts";
import { abortable, throwIfAborted } from "./tool-support.ts";
import { DEFAULT_MAX_BYTES, formatSize, GREP_MAX_LINE_LENGTH, truncateHead, truncateLine, type TruncationResult } from "./truncate.ts";

const DEFAULT_LIMIT = 100;
/** Files larger than this are skipped (bytes). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Parameters of the grep tool (pi's). */
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
 *
 * @example
 * ```ts
 * const tool = createGrepTool(env);
 * ```
 */
export function createGrepTool(env: ExecutionEnv): AgentTool<GrepToolInput, GrepToolDetails | undefined> {
  return defineTool({
    name: "grep",
    label: "grep",
    description: `Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to ${DEFAULT_LIMIT} matches or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Long lines are truncated to ${GREP_MAX_LINE_LENGTH} chars.`,
    parameters: grepParameters,
    async execute(args, { signal }): Promise<ToolResult<GrepToolDetails | undefined>> {
      throwIfAborted(signal);
      return abortable(signal, async () => {
        const regex = compile(args.pattern, args.literal, args.ignoreCase);
        const searchPath = await env.resolvePath(args.path || ".", "read");
        const stats = await stat(searchPath).catch(() => undefined);
        if (!stats) throw new Error(`Path not found: ${searchPath}`);
        const contextLines = args.context && args.context > 0 ? Math.floor(args.context) : 0;
        const effectiveLimit = Math.max(1, Math.floor(args.limit ?? DEFAULT_LIMIT));
        const files = stats.isDirectory()
          ? (await searchFiles({ directory: searchPath, top: env.allowOutsideRoot ? searchPath : env.root, pattern: args.glob ?? "*", onlyFiles: true, signal })).map(
              (relativePath) => ({ absolute: join(searchPath, relativePath), shown: relativePath }),
            )
          : [{ absolute: searchPath, shown: basename(searchPath) }];
        const output: string[] = [];
        let matchCount = 0;
        let matchLimitReached = false;
        let linesTruncated = false;
        const clip = (line: string) => {
          const clipped = truncateLine(line.replace(/\r/g, ""));
          if (clipped.wasTruncated) linesTruncated = true;
          return clipped.text;
        };
        for (const file of files) {
          if (matchLimitReached) break;
          throwIfAborted(signal);
          try {
            const real = await env.checkPath(file.absolute, "read");
            if ((await stat(real)).size > MAX_FILE_BYTES) continue;
          } catch {
            continue; // a symlink leaving the root, or a file that vanished
          }
          const buffer = await readFile(file.absolute).catch(() => undefined);
          if (!buffer || buffer.subarray(0, 8192).includes(0)) continue;
          const lines = buffer.toString("utf8").split("\n");
          // A trailing newline does not start another line (as in ripgrep).
          const lineCount = lines.length > 1 && lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
          const matched: number[] = [];
          for (let index = 0; index < lineCount; index += 1) {
            if (!regex.test(lines[index].endsWith("\r") ? lines[index].slice(0, -1) : lines[index])) continue;
            if (matchCount >= effectiveLimit) {
              matchLimitReached = true;
              break;
            }
            matched.push(index);
            matchCount += 1;
          }
          const matchSet = new Set(matched);
          let shownUntil = -1;
          for (const index of matched) {
            const start = Math.max(0, index - contextLines, shownUntil + 1);
            const end = Math.min(lineCount - 1, index + contextLines);
            for (let current = start; current <= end; current += 1) {
              output.push(
                matchSet.has(current) ? `${file.shown}:${current + 1}: ${clip(lines[current])}` : `${file.shown}-${current + 1}- ${clip(lines[current])}`,
              );
            }
            shownUntil = Math.max(shownUntil, end);
          }
        }
        if (output.length === 0) return { content: [{ type: "text", text: "No matches found" }], details: undefined };
        const truncation = truncateHead(output.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
        const details: GrepToolDetails = {};
        const notices: string[] = [];
        if (matchLimitReached) {
          notices.push(`${effectiveLimit} matches limit reached. Use limit=${effectiveLimit * 2} for more, or refine pattern`);
          details.matchLimitReached = effectiveLimit;
        }
        if (truncation.truncated) {
          notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
          details.truncation = truncation;
        }
        if (linesTruncated) {
          notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines`);
          details.linesTruncated = true;
        }
        const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
        return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
      });
    },
  });
}

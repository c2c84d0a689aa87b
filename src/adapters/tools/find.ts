/**
 * The `find` tool: list files by glob pattern (pi's parameters and texts; `file-search.ts` semantics). Hidden files included, `.gitignore`
 * honoured, every path re-checked through held handles before it is shown; sorted output with `/` on directories, pi's limit notices.
 */
import { lstat } from "node:fs/promises";
import { z } from "zod";
import { defineTool, type AgentTool, type ToolResult } from "../../core/tools.ts";
import { heldPath, HeldWalker } from "../beneath.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { searchFiles } from "./file-search.ts";
import { abortable, resolveDirectory, throwIfAborted } from "./tool-support.ts";
import { DEFAULT_MAX_BYTES, formatSize, truncateHead, type TruncationResult } from "./truncate.ts";
import { ignored } from "../../core/ignored.ts";

const DEFAULT_LIMIT = 1000;

/**
 * Parameters of the find tool (pi's).
 * @example
 * findParameters.parse({ pattern: "*.test.ts", path: "test" });
 */
export const findParameters = z.object({
  pattern: z.string().describe("Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"),
  path: z.string().optional().describe("Directory to search in (default: current directory)"),
  limit: z.number().optional().describe("Maximum number of results (default: 1000)"),
});

/** Arguments of the find tool. */
export type FindToolInput = z.infer<typeof findParameters>;

/** Details of a find result (pi's). */
export interface FindToolDetails {
  resultLimitReached?: number;
  truncation?: TruncationResult;
}

/**
 * The listed paths that still exist below the held search directory, checked through held directory handles: the listing walks paths by name, so a
 * directory swapped for a symlink mid-walk could list an outside folder; such entries are not below the held handle and are dropped here. Directories
 * (trailing `/`) must still be directories.
 */
async function keepHeld(env: ExecutionEnv, directory: string, shown: string, listed: readonly string[]): Promise<string[]> {
  const held = await env.openDirectory(directory, { access: "read", path: shown });
  const walker = new HeldWalker(held);
  const kept: string[] = [];
  try {
    for (const entry of listed) {
      const wantsDirectory = entry.endsWith("/");
      try {
        const { directory: parent, name } = await walker.directoryOf(entry);
        const stats = await lstat(heldPath(parent, name));
        if (!wantsDirectory || stats.isDirectory()) kept.push(entry);
      } catch (error) {
        ignored("a listed path is gone, or reached through a symlink now: not inside", error);
      }
    }
  } finally {
    await walker.close();
    await held.handle.close();
  }
  return kept;
}

/**
 * Creates the `find` tool bound to an execution env. See the module contract.
 * @example
 * const tool = createFindTool(env);
 */
export function createFindTool(env: ExecutionEnv): AgentTool<FindToolInput, FindToolDetails | undefined> {
  return defineTool({
    name: "find",
    replay: "safe",
    label: "find",
    description: `Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to ${DEFAULT_LIMIT} results or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first).`,
    parameters: findParameters,
    async execute({ pattern, path, limit }, { signal }): Promise<ToolResult<FindToolDetails | undefined>> {
      throwIfAborted(signal);
      return abortable(signal, async () => {
        const directory = await resolveDirectory(env, path);
        const effectiveLimit = Math.max(1, Math.floor(limit ?? DEFAULT_LIMIT));
        const listed = await searchFiles({ directory, top: env.allowOutsideRoot ? directory : env.root, pattern, onlyFiles: false, signal });
        throwIfAborted(signal);
        const found = await keepHeld(env, directory, path || ".", listed);
        if (found.length === 0) return { content: [{ type: "text", text: "No files found matching pattern" }], details: undefined };
        const shown = found.slice(0, effectiveLimit);
        const truncation = truncateHead(shown.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
        const details: FindToolDetails = {};
        const notices: string[] = [];
        if (found.length > effectiveLimit) {
          notices.push(`${effectiveLimit} results limit reached. Use limit=${effectiveLimit * 2} for more, or refine pattern`);
          details.resultLimitReached = effectiveLimit;
        }
        if (truncation.truncated) {
          notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
          details.truncation = truncation;
        }
        const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
        return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
      });
    },
  });
}

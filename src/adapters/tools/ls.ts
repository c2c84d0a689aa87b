/**
 * The `ls` tool: list one directory (pi's parameters and texts), sorted case-insensitively with dotfiles and `/` on directories; gitignored entries
 * hidden and counted; the directory is read from a symlink-refusing handle; pi's limit notices and errors.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { defineTool, type AgentTool, type ToolResult } from "../../core/tools.ts";
import { heldPath, type HeldDirectory } from "../beneath.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { GitignoreFilter } from "./gitignore-filter.ts";
import { abortable, resolveDirectory, throwIfAborted } from "./tool-support.ts";
import { DEFAULT_MAX_BYTES, formatSize, truncateHead, type TruncationResult } from "./truncate.ts";
import { ignoreError } from "../../core/ignored.ts";

const DEFAULT_LIMIT = 500;

/**
 * Parameters of the ls tool (pi's).
 * @example
 * lsParameters.parse({ path: "src", limit: 100 });
 */
export const lsParameters = z.object({
  path: z.string().optional().describe("Directory to list (default: current directory)"),
  limit: z.number().optional().describe("Maximum number of entries to return (default: 500)"),
});

/** Arguments of the ls tool. */
export type LsToolInput = z.infer<typeof lsParameters>;

/** Details of an ls result (pi's fields plus `ignoredEntries`, ours). */
export interface LsToolDetails {
  entryLimitReached?: number;
  truncation?: TruncationResult;
  ignoredEntries?: number;
}

/**
 * Creates the `ls` tool bound to an execution env. See the module contract.
 * @example
 * const tool = createLsTool(env);
 */
export function createLsTool(env: ExecutionEnv): AgentTool<LsToolInput, LsToolDetails | undefined> {
  return defineTool({
    name: "ls",
    replay: "safe",
    label: "ls",
    description: `List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to ${DEFAULT_LIMIT} entries or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first).`,
    parameters: lsParameters,
    async execute({ path, limit }, { signal }): Promise<ToolResult<LsToolDetails | undefined>> {
      throwIfAborted(signal);
      return abortable(signal, async () => {
        const directory = await resolveDirectory(env, path);
        const effectiveLimit = limit ?? DEFAULT_LIMIT;
        // List the directory a symlink-refusing walk opened, never the path again.
        const held = await env.openDirectory(directory, { access: "read", path: path || "." });
        try {
          return await listHeld(held);
        } finally {
          await held.handle.close();
        }

        async function listHeld(held: HeldDirectory): Promise<ToolResult<LsToolDetails | undefined>> {
          let names: string[];
          try {
            names = await readdir(heldPath(held));
          } catch (error) {
            throw new Error(`Cannot read directory: ${(error as Error).message}`);
          }
          names.sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
          const filter = new GitignoreFilter(env.allowOutsideRoot ? directory : env.root, { skipGitDirectory: false });
          const listingIgnored = filter.isIgnoredDeep(directory, true);
          const results: string[] = [];
          let ignoredEntries = 0;
          let entryLimitReached = false;
          for (const name of names) {
            throwIfAborted(signal);
            let isDirectory: boolean;
            try {
              const entry = await lstat(heldPath(held, name));
              // A symlink gets the `/` suffix only when its target is a directory the env allows.
              isDirectory = entry.isSymbolicLink()
                ? (await stat(await env.checkPath(join(directory, name), "read")).catch(ignoreError("a symlink whose target cannot be read gets no `/`")))?.isDirectory() === true
                : entry.isDirectory();
            } catch {
              continue;
            }
            if (!listingIgnored && filter.isIgnored(join(directory, name), isDirectory)) {
              ignoredEntries += 1;
              continue;
            }
            if (results.length >= effectiveLimit) {
              entryLimitReached = true;
              continue;
            }
            results.push(isDirectory ? `${name}/` : name);
          }
          const details: LsToolDetails = {};
          const notices: string[] = [];
          if (ignoredEntries > 0) details.ignoredEntries = ignoredEntries;
          if (results.length === 0) {
            const text = ignoredEntries > 0 ? `(empty directory)\n\n[${ignoredEntries} gitignored entries hidden]` : "(empty directory)";
            return { content: [{ type: "text", text }], details: ignoredEntries > 0 ? details : undefined };
          }
          const truncation = truncateHead(results.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
          if (entryLimitReached) {
            notices.push(`${effectiveLimit} entries limit reached. Use limit=${effectiveLimit * 2} for more`);
            details.entryLimitReached = effectiveLimit;
          }
          if (truncation.truncated) {
            notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
            details.truncation = truncation;
          }
          if (ignoredEntries > 0) notices.push(`${ignoredEntries} gitignored entries hidden`);
          const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
          return { content: [{ type: "text", text }], details: Object.keys(details).length > 0 ? details : undefined };
        }
      });
    },
  });
}

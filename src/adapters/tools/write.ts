/**
 * The `write` tool: create or overwrite a file.
 *
 * Contract (parameters and texts: pi 0.73.1 `write`, `docs/pi-parity.md`; fixes ours):
 * - parameters `{ path, content }`; `path` goes through {@link ExecutionEnv.resolvePath}
 *   (PathEscapeError outside the root);
 * - creates missing parent directories, each inside its held parent handle, and replaces the file
 *   inside the held handle of its directory: a path component that is (or becomes) a symbolic
 *   link refuses the write with PathEscapeError (ExecutionEnv.openDirectory);
 * - result text `Successfully wrote N bytes to PATH` where N is the true UTF-8 byte count (pi
 *   reports UTF-16 code units) and PATH is the path as given; `details` is undefined;
 * - the file is replaced atomically (temp file + rename; permission bits kept), so an abort or a
 *   crash never leaves it half-written; writes and edits to one file are serialized (keyed by realpath);
 * - honours `context.signal`: an abort before the rename leaves the file untouched and throws
 *   `Operation aborted`.
 *
 * @example
 * ```ts
 * const write = createWriteTool(createExecutionEnv({ root: dir }));
 * await write.execute({ path: "notes/a.md", content: "héllo" }, context); // "Successfully wrote 6 bytes to notes/a.md"
 * ```
 */
import { basename, dirname } from "node:path";
import { z } from "zod";
import { defineTool, type AgentTool } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { withFileMutationQueue, withHeldFileMutationQueue } from "./file-mutation-queue.ts";
import { abortable, replaceFileAtomically, throwIfAborted } from "./tool-support.ts";

/**
 * Parameters of the write tool (pi's).
 *
 * @example
 * ```ts
 * writeParameters.parse({ path: "notes.txt", content: "hello\n" });
 * ```
 */
export const writeParameters = z.object({
  path: z.string().describe("Path to the file to write (relative or absolute)"),
  content: z.string().describe("Content to write to the file"),
});

/** Arguments of the write tool. */
export type WriteToolInput = z.infer<typeof writeParameters>;

/**
 * Creates the `write` tool bound to an execution env. See the module contract.
 *
 * @example
 * ```ts
 * const tool = createWriteTool(env);
 * ```
 */
export function createWriteTool(env: ExecutionEnv): AgentTool<WriteToolInput, undefined> {
  return defineTool({
    name: "write",
    label: "write",
    description:
      "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
    parameters: writeParameters,
    async execute({ path, content }, { signal }) {
      throwIfAborted(signal);
      const absolutePath = await env.resolvePath(path, "write");
      return abortable(signal, () =>
        withFileMutationQueue(absolutePath, async () => {
          throwIfAborted(signal);
          // Parents are created and the file replaced through held handles: a symlink swapped in
          // after the check fails the walk instead of redirecting the write.
          const directory = await env.openDirectory(dirname(absolutePath), { access: "write", create: true, path });
          const bytes = Buffer.from(content, "utf8");
          try {
            const name = basename(absolutePath);
            await withHeldFileMutationQueue(await directory.handle.stat(), name, () => replaceFileAtomically(directory, name, bytes, signal));
          } finally {
            await directory.handle.close();
          }
          return { content: [{ type: "text" as const, text: `Successfully wrote ${bytes.length} bytes to ${path}` }], details: undefined };
        }),
      );
    },
  });
}

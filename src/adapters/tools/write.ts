/**
 * The `write` tool: create or overwrite a file (pi's parameters and texts). Parents are created inside held handles and a symlinked component is
 * refused; the file is replaced atomically (temp file + rename) and serialized per file; the result reports true UTF-8 bytes; an abort leaves the
 * file untouched.
 */
import { basename, dirname } from "node:path";
import { z } from "zod";
import { defineTool, type AgentTool } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { withFileMutationQueue, withHeldFileMutationQueue } from "./file-mutation-queue.ts";
import { abortable, replaceFileAtomically, throwIfAborted } from "./tool-support.ts";

/**
 * Parameters of the write tool (pi's).
 * @example
 * writeParameters.parse({ path: "notes.txt", content: "hello\n" });
 */
export const writeParameters = z.object({
  path: z.string().describe("Path to the file to write (relative or absolute)"),
  content: z.string().describe("Content to write to the file"),
});

/** Arguments of the write tool. */
export type WriteToolInput = z.infer<typeof writeParameters>;

/**
 * Creates the `write` tool bound to an execution env. See the module contract.
 * @example
 * const tool = createWriteTool(env);
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

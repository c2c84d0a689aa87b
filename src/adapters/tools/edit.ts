/**
 * The `edit` tool: exact-text replacements in one file.
 *
 * Contract (parameters, texts and details: pi 0.73.1 `edit`, `docs/pi-parity.md`;
 * matching fixes ours, see `edit-match.ts`):
 * - parameters `{ path, edits: [{ oldText, newText }] }` (no extra properties); `prepareArguments`
 *   accepts `edits` as a JSON string and the legacy top-level `oldText`/`newText` (appended to
 *   `edits`), as pi does; an empty `edits` is an error;
 * - only the matched regions change; every other byte (BOM, line endings, trailing whitespace,
 *   smart quotes) is untouched even when fuzzy matching was needed (pi #5899);
 * - success text `Successfully replaced N block(s) in PATH.`; details `{ diff, firstChangedLine }`
 *   in pi's line-numbered diff format;
 * - errors: `Could not edit file: PATH. Error code: ENOENT.` when unreadable, a refusal for files
 *   that are not valid UTF-8 (ours: decoding would corrupt them), and the matching
 *   errors of `planEdits`; PathEscapeError outside the root;
 * - the file is read and replaced through the held handle of its directory (a symlink swapped
 *   in after the check is refused, never followed), and a file with several hard links is refused
 *   unless the env allows them (ExecutionEnv.openFile);
 * - the file is replaced atomically; edits and writes to one file are serialized (keyed by
 *   realpath); honours `context.signal` (`Operation aborted`, file untouched).
 *
 * @example
 * ```ts
 * const edit = createEditTool(env);
 * await edit.execute({ path: "a.ts", edits: [{ oldText: "let x = 1", newText: "let x = 2" }] }, context);
 * ```
 */
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { z } from "zod";
import { PathEscapeError } from "../../core/errors.ts";
import { heldPath, type HeldDirectory } from "../beneath.ts";
import { defineTool, type AgentTool } from "../../core/tools.ts";
import type { ExecutionEnv } from "../execution-env.ts";
import { generateDiffString } from "./edit-diff.ts";
import { planEdits } from "./edit-match.ts";
import { withFileMutationQueue, withHeldFileMutationQueue } from "./file-mutation-queue.ts";
import { abortable, describeFsError, replaceFileAtomically, throwIfAborted } from "./tool-support.ts";

const replacement = z.strictObject({
  oldText: z
    .string()
    .describe(
      "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
    ),
  newText: z.string().describe("Replacement text for this targeted edit."),
});

/**
 * Parameters of the edit tool (pi 0.73.1's).
 *
 * @example
 * ```ts
 * editParameters.parse({ path: "src/a.ts", edits: [{ oldText: "foo", newText: "bar" }] });
 * ```
 */
export const editParameters = z.strictObject({
  path: z.string().describe("Path to the file to edit (relative or absolute)"),
  edits: z
    .array(replacement)
    .describe(
      "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
    ),
});

/** Arguments of the edit tool. */
export type EditToolInput = z.infer<typeof editParameters>;

/** Details of a successful edit (pi's): the line-numbered diff and the first changed line (1-based). */
export interface EditToolDetails {
  diff: string;
  firstChangedLine?: number;
}

/**
 * pi's argument shim: `edits` as a JSON string is parsed; legacy `oldText`/`newText` are appended
 * to `edits`. Anything else passes through unchanged (validation reports it).
 *
 * @example
 * ```ts
 * prepareEditArguments({ path: "a", oldText: "x", newText: "y" }); // { path: "a", edits: [{ oldText: "x", newText: "y" }] }
 * ```
 */
export function prepareEditArguments(input: unknown): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const args: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  if (typeof args.edits === "string") {
    try {
      const parsed: unknown = JSON.parse(args.edits);
      if (Array.isArray(parsed)) args.edits = parsed;
    } catch {
      // Leave it; validation names the field.
    }
  }
  if (typeof args.oldText !== "string" || typeof args.newText !== "string") return args;
  const edits = Array.isArray(args.edits) ? [...(args.edits as unknown[])] : [];
  edits.push({ oldText: args.oldText, newText: args.newText });
  const { oldText: _oldText, newText: _newText, ...rest } = args;
  return { ...rest, edits };
}

/**
 * Creates the `edit` tool bound to an execution env. See the module contract.
 *
 * @example
 * ```ts
 * const tool = createEditTool(env);
 * ```
 */
export function createEditTool(env: ExecutionEnv): AgentTool<EditToolInput, EditToolDetails> {
  return defineTool({
    name: "edit",
    label: "edit",
    description:
      "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
    parameters: editParameters,
    prepareArguments: prepareEditArguments,
    async execute({ path, edits }, { signal }) {
      if (edits.length === 0) throw new Error("Edit tool input is invalid. edits must contain at least one replacement.");
      throwIfAborted(signal);
      const absolutePath = await env.resolvePath(path, "write");
      const name = basename(absolutePath);
      const editIn = async (directory: HeldDirectory) => {
        try {
          await access(heldPath(directory, name), constants.R_OK | constants.W_OK);
        } catch (error) {
          throw new Error(`Could not edit file: ${path}. ${describeFsError(error)}.`);
        }
        const file = await env.openFileIn(directory, name, path);
        let raw: Buffer;
        try {
          if (!file.stats.isFile()) throw new Error(`Could not edit file: ${path}. It is not a regular file.`);
          raw = await file.handle.readFile();
        } finally {
          await file.handle.close();
        }
        throwIfAborted(signal);
        const text = raw.toString("utf8");
        if (!Buffer.from(text, "utf8").equals(raw)) {
          throw new Error(`Could not edit file: ${path}. It is not valid UTF-8 text; editing it would change bytes outside the edit.`);
        }
        const plan = planEdits(text, edits, path);
        await replaceFileAtomically(directory, name, Buffer.from(plan.content, "utf8"), signal);
        const { diff, firstChangedLine } = generateDiffString(plan.baseText, plan.newText);
        return {
          content: [{ type: "text" as const, text: `Successfully replaced ${edits.length} block(s) in ${path}.` }],
          details: { diff, firstChangedLine },
        };
      };
      return abortable(signal, () =>
        withFileMutationQueue(absolutePath, async () => {
          const directory = await env.openDirectory(dirname(absolutePath), { access: "write", path }).catch((error: unknown) => {
            throw PathEscapeError.isInstance(error) ? error : new Error(`Could not edit file: ${path}. ${describeFsError(error)}.`);
          });
          try {
            return await withHeldFileMutationQueue(await directory.handle.stat(), name, () => editIn(directory));
          } finally {
            await directory.handle.close();
          }
        }),
      );
    },
  });
}

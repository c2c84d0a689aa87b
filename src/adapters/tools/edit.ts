/**
 * The `edit` tool: exact-text replacements in one file (pi's parameters, texts and details; matching in `edit-match.ts`). Only matched regions
 * change; files that are not UTF-8 are refused; the file is read and replaced through held handles (no symlinks, no extra hard links unless
 * allowed), atomically and serialized per file; an abort leaves it untouched.
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
import { ignored } from "../../core/ignored.ts";

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
 * @example
 * editParameters.parse({ path: "src/a.ts", edits: [{ oldText: "foo", newText: "bar" }] });
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

/** pi's argument shim: `edits` as a JSON string is parsed; legacy `oldText`/`newText` are appended to `edits`. Anything else passes through. */
export function prepareEditArguments(input: unknown): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const args: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  if (typeof args.edits === "string") {
    try {
      const parsed: unknown = JSON.parse(args.edits);
      if (Array.isArray(parsed)) args.edits = parsed;
    } catch (error) {
      ignored("edits is a string that is not JSON; validation names the field", error);
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
 * @example
 * const tool = createEditTool(env);
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

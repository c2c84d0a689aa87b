/**
 * Workspace events: checkpoints of the files under a session's workspace root, and restores.
 * Logged in the session's stream (`src/harness/workspace/` records them; `docs/workspace.md`).
 *
 * Contract (ours; purista's DurableWorkspaceStore orders its workspace checkpoint before the
 * runtime commit, here it commits in the same append as, and before, the tool result):
 * - `workspace.checkpointed` holds a manifest delta (`changes`: path → node or `null` for a
 *   deletion; see `src/core/workspace-manifest.ts`) and is anchored at `entryId`: the tree recorded
 *   at an entry is the fold of the checkpoints anchored on the path from the root to that entry,
 *   in stream order. A tool call's checkpoint is anchored at its result entry and appended before
 *   that entry's `entry.appended`; `reason` says why it was taken: `tool` (a tool call changed
 *   files), `baseline` (the first checkpoint of a session: the whole tree), `user` (the tree
 *   differed from the recording before a restore or at the start of a run: work the log had not
 *   seen), `fork` (a forked session's copy of the tree at its fork point);
 * - blobs are named by the sha256 of their raw bytes and stored (compressed) in the log's
 *   database, per tenant; `storedBytes` counts the compressed bytes this checkpoint added;
 * - `workspace.restored` says the files were put back to the tree recorded at `entryId`
 *   (`changed` paths), after `savedCheckpointId` (when present) recorded what differed before;
 * - paths and blob hashes are file names and content digests, never file contents.
 *
 * @example
 * ```ts
 * for (const event of await log.readStream(streamId)) if (isEventOfType(event, "workspace.checkpointed")) console.log(event.data.changes.length);
 * ```
 */
import { z } from "zod";

const nodeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("file"), blob: z.string().regex(/^[0-9a-f]{64}$/), size: z.number().int().nonnegative(), mode: z.number().int().nonnegative() }),
  z.object({ kind: z.literal("symlink"), target: z.string() }),
  z.object({ kind: z.literal("dir"), mode: z.number().int().nonnegative() }),
  z.object({ kind: z.literal("skipped"), size: z.number().int().nonnegative(), reason: z.enum(["file_cap", "total_cap"]) }),
]);

/** One change of a checkpoint (`node: null` is a deletion). */
export const workspaceChangeSchema = z.object({ path: z.string().min(1), node: nodeSchema.nullable() });

export const workspaceCheckpointedSchema = z.object({
  checkpointId: z.string().min(1),
  /** The entry the checkpoint is anchored at (`null`: before the first entry). */
  entryId: z.string().nullable(),
  reason: z.enum(["tool", "baseline", "user", "fork"]),
  /** The tool call whose changes these are (reason `tool`). */
  toolCallId: z.string().optional(),
  changes: z.array(workspaceChangeSchema),
  storedBytes: z.number().int().nonnegative(),
});

export const workspaceRestoredSchema = z.object({
  /** The entry whose recorded tree the files were put back to. */
  entryId: z.string().nullable(),
  /** Paths created, changed or deleted. */
  changed: z.number().int().nonnegative(),
  /** The checkpoint that recorded the unrecorded work found before the restore, if any. */
  savedCheckpointId: z.string().optional(),
});

/** Data of `workspace.checkpointed`. */
export type WorkspaceCheckpointedData = z.output<typeof workspaceCheckpointedSchema>;

/**
 * The workspace event types with their schema versions and schemas.
 *
 * @example
 * ```ts
 * WORKSPACE_EVENT_SCHEMAS["workspace.restored"].schema.parse({ entryId: "e1", changed: 2 });
 * ```
 */
export const WORKSPACE_EVENT_SCHEMAS = {
  "workspace.checkpointed": { version: 1, schema: workspaceCheckpointedSchema },
  "workspace.restored": { version: 1, schema: workspaceRestoredSchema },
} as const;

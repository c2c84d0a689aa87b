/**
 * Workspace events, in the session's stream (`src/harness/workspace/`, `docs/workspace.md`; ours, after purista's DurableWorkspaceStore).
 * `workspace.checkpointed` holds a manifest delta anchored at `entryId` (the tree at an entry is the fold of the checkpoints on its path), appended
 * before the tool result's `entry.appended`, with a `reason` (`tool`, `baseline`, `user`, `fork`); blobs are named by sha256 and stored compressed
 * per tenant. `workspace.restored` says the files were put back to the tree at `entryId`. Paths and hashes only, never file contents.
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

/** The workspace event types with their schema versions and schemas. */
export const WORKSPACE_EVENT_SCHEMAS = {
  "workspace.checkpointed": { version: 1, schema: workspaceCheckpointedSchema },
  "workspace.restored": { version: 1, schema: workspaceRestoredSchema },
} as const;

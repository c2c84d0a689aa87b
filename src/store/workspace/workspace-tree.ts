/**
 * The tree recorded at an entry: the fold of a session's `workspace.checkpointed` events along
 * the path from the root to that entry.
 *
 * Contract (ours; `docs/workspace.md`):
 * - checkpoints anchored at `null` come first, then, for each entry of the path from the root,
 *   the checkpoints anchored at it, each group in stream order; checkpoints anchored on other
 *   branches are not part of the tree;
 * - the fold starts from `start` (empty, or a fork's parent tree at the fork point);
 * - pure over its inputs, O(path length + changes folded).
 *
 * @example
 * ```ts
 * const tree = treeAt(view.getBranch(entryId), checkpointsOf(events), entryId);
 * ```
 */
import { applyChanges, type WorkspaceManifest } from "../../core/workspace-manifest.ts";
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import type { WorkspaceCheckpointedData } from "../events/workspace-events.ts";

/**
 * The checkpoints among `events`, in stream order.
 *
 * @example
 * ```ts
 * const checkpoints = checkpointsOf(await log.readStream(streamId));
 * ```
 */
export function checkpointsOf(events: readonly StoredEvent[]): WorkspaceCheckpointedData[] {
  return events.flatMap((event) => (isEventOfType(event, "workspace.checkpointed") ? [event.data] : []));
}

/**
 * The tree recorded at `entryId`, given the path to it (root first) and the session's checkpoints
 * in stream order, on top of `start` (a fork's parent tree; default empty).
 *
 * @example
 * ```ts
 * const tree = treeAt(view.getBranch(leafId), checkpoints, leafId);
 * ```
 */
export function treeAt(
  path: readonly { id: string }[],
  checkpoints: readonly WorkspaceCheckpointedData[],
  entryId: string | null,
  start: WorkspaceManifest = new Map(),
): WorkspaceManifest {
  const byEntry = new Map<string | null, WorkspaceCheckpointedData[]>();
  for (const checkpoint of checkpoints) {
    const group = byEntry.get(checkpoint.entryId);
    if (group) group.push(checkpoint);
    else byEntry.set(checkpoint.entryId, [checkpoint]);
  }
  let tree = start;
  for (const checkpoint of byEntry.get(null) ?? []) tree = applyChanges(tree, checkpoint.changes);
  if (entryId === null) return tree;
  for (const entry of path) for (const checkpoint of byEntry.get(entry.id) ?? []) tree = applyChanges(tree, checkpoint.changes);
  return tree;
}

/**
 * The tree recorded at an entry (ours; `docs/workspace.md`): the fold, from `start` (empty, or a fork's parent tree), of the `workspace.checkpointed`
 * events anchored at `null`, then at each entry of the path from the root, each group in stream order; other branches do not count. Pure (a new
 * map), O(size of `start` + path length + changes).
 */
import { applyChangesTo, type WorkspaceManifest } from "../../core/workspace-manifest.ts";
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import type { WorkspaceCheckpointedData } from "../events/workspace-events.ts";

/** The checkpoints among `events`, in stream order. */
export function checkpointsOf(events: readonly StoredEvent[]): WorkspaceCheckpointedData[] {
  return events.flatMap((event) => (isEventOfType(event, "workspace.checkpointed") ? [event.data] : []));
}

/**
 * The tree recorded at `entryId`, given the path to it (root first) and the session's checkpoints in stream order, on top of `start` (a fork's parent
 * tree; default empty).
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
  const tree = new Map(start);
  for (const checkpoint of byEntry.get(null) ?? []) applyChangesTo(tree, checkpoint.changes);
  if (entryId === null) return tree;
  for (const entry of path) for (const checkpoint of byEntry.get(entry.id) ?? []) applyChangesTo(tree, checkpoint.changes);
  return tree;
}

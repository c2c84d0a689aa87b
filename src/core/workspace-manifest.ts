/**
 * The workspace manifest, as pure data: POSIX paths relative to the root → {@link WorkspaceNode} (a file's sha256, size and mode; a symlink's
 * target; a folder's mode; or `skipped` with a size). A checkpoint is a list of {@link WorkspaceChange}s (`null` deletes, a folder with everything
 * under it); `applyChanges(from, diffManifests(from, to))` equals `to`.
 * @example
 * const next = applyChanges(new Map(), [{ path: "a.txt", node: { kind: "file", blob: "…", size: 3, mode: 0o644 } }]);
 */

/** A file, symlink, folder or skipped file as recorded. Modes are the permission bits (`mode & 0o7777`). */
export type WorkspaceNode =
  | { kind: "file"; blob: string; size: number; mode: number }
  | { kind: "symlink"; target: string }
  | { kind: "dir"; mode: number }
  | { kind: "skipped"; size: number; reason: "file_cap" | "total_cap" };

/** A manifest: relative POSIX path → node. */
export type WorkspaceManifest = Map<string, WorkspaceNode>;

/** One change of a checkpoint: the node now at `path`, or `null` when it was deleted. */
export interface WorkspaceChange {
  path: string;
  node: WorkspaceNode | null;
}

/** The symbol under which a tool result carries the checkpoint of the files its call changed (set by the recorder, read by the run). */
export const WORKSPACE_CHECKPOINT: unique symbol = Symbol.for("arbor.workspace.checkpoint");

/** What a tool call's checkpoint holds before it is logged (the run adds the result's entry id). */
export interface PendingWorkspaceCheckpoint {
  checkpointId: string;
  changes: WorkspaceChange[];
  /** Compressed bytes of the blobs this checkpoint stored that were not stored before. */
  storedBytes: number;
}

/** True when two nodes record the same thing. */
export function sameNode(a: WorkspaceNode | undefined | null, b: WorkspaceNode | undefined | null): boolean {
  if (a === b) return true;
  if (!a || !b) return !a && !b;
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case "file":
      return b.kind === "file" && a.blob === b.blob && a.mode === b.mode;
    case "symlink":
      return b.kind === "symlink" && a.target === b.target;
    case "dir":
      return b.kind === "dir" && a.mode === b.mode;
    case "skipped":
      return b.kind === "skipped" && a.size === b.size;
  }
}

/** `manifest` with `changes` applied in order, as a new map; deleting or replacing a folder removes everything under it. */
export function applyChanges(manifest: WorkspaceManifest, changes: readonly WorkspaceChange[]): WorkspaceManifest {
  return applyChangesTo(new Map(manifest), changes);
}

/** {@link applyChanges} in place: folding many checkpoints costs their changes, not a copy of the tree each. */
export function applyChangesTo(manifest: WorkspaceManifest, changes: readonly WorkspaceChange[]): WorkspaceManifest {
  for (const change of changes) {
    const existing = manifest.get(change.path);
    if (existing?.kind === "dir" && change.node?.kind !== "dir") {
      const prefix = `${change.path}/`;
      // Deleting while iterating a Map is safe: every remaining entry is still visited.
      for (const key of manifest.keys()) if (key.startsWith(prefix)) manifest.delete(key);
    }
    if (change.node === null) manifest.delete(change.path);
    else manifest.set(change.path, change.node);
  }
  return manifest;
}

/**
 * The changes that turn `from` into `to`: deletions first (deepest paths first), then additions and changes in path order (parents before children).
 */
export function diffManifests(from: WorkspaceManifest, to: WorkspaceManifest): WorkspaceChange[] {
  const deletions: WorkspaceChange[] = [];
  const updates: WorkspaceChange[] = [];
  for (const path of from.keys()) if (!to.has(path)) deletions.push({ path, node: null });
  for (const [path, node] of to) if (!sameNode(from.get(path), node)) updates.push({ path, node });
  deletions.sort((a, b) => (a.path < b.path ? 1 : a.path > b.path ? -1 : 0));
  updates.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return [...deletions, ...updates];
}

/**
 * The workspace manifest: what a checkpoint records of a folder, as pure data.
 *
 * Contract (ours; the manifest-delta design follows purista's DurableWorkspaceStore and git's
 * tree objects):
 * - a manifest maps a POSIX path relative to the workspace root (no leading `./`, no `..`) to a
 *   {@link WorkspaceNode}: a regular file (its blob's sha256 over the raw bytes, size in bytes,
 *   permission bits), a symlink (its target, verbatim), a folder (permission bits; recorded so
 *   empty folders come back) or a file too large to record (`skipped`, with its size);
 * - a checkpoint is a delta: a list of {@link WorkspaceChange}s, each a path and its new node, or
 *   `null` for a deletion; {@link applyChanges} folds them in order, and deleting a folder
 *   deletes everything under it;
 * - {@link diffManifests} gives the changes that turn one manifest into another, sorted by
 *   path (deletions deepest first), so `applyChanges(from, diffManifests(from, to))` equals `to`.
 *
 * @example
 * ```ts
 * const next = applyChanges(new Map(), [{ path: "a.txt", node: { kind: "file", blob: "…", size: 3, mode: 0o644 } }]);
 * ```
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

/**
 * The symbol under which a tool result carries the checkpoint of the files its call changed
 * (set by the harness's workspace recorder, read by the run when it records the result).
 */
export const WORKSPACE_CHECKPOINT: unique symbol = Symbol.for("arbor.workspace.checkpoint");

/** What a tool call's checkpoint holds before it is logged (the run adds the result's entry id). */
export interface PendingWorkspaceCheckpoint {
  checkpointId: string;
  changes: WorkspaceChange[];
  /** Compressed bytes of the blobs this checkpoint stored that were not stored before. */
  storedBytes: number;
}

/**
 * True when two nodes record the same thing.
 *
 * @example
 * ```ts
 * sameNode({ kind: "dir", mode: 0o755 }, { kind: "dir", mode: 0o755 }); // true
 * ```
 */
export function sameNode(a: WorkspaceNode | undefined | null, b: WorkspaceNode | undefined | null): boolean {
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

/**
 * `manifest` with `changes` applied in order (a new map; the input is not changed). Deleting a
 * folder, or replacing it with a file or symlink, removes everything under it.
 *
 * @example
 * ```ts
 * const after = applyChanges(before, [{ path: "src", node: null }]);
 * ```
 */
export function applyChanges(manifest: WorkspaceManifest, changes: readonly WorkspaceChange[]): WorkspaceManifest {
  const next = new Map(manifest);
  for (const change of changes) {
    const existing = next.get(change.path);
    if (existing?.kind === "dir" && change.node?.kind !== "dir") {
      const prefix = `${change.path}/`;
      for (const key of [...next.keys()]) if (key.startsWith(prefix)) next.delete(key);
    }
    if (change.node === null) next.delete(change.path);
    else next.set(change.path, change.node);
  }
  return next;
}

/**
 * The changes that turn `from` into `to`: deletions first (deepest paths first), then
 * additions and changes in path order (parents before children).
 *
 * @example
 * ```ts
 * const changes = diffManifests(recorded, scanned);
 * ```
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

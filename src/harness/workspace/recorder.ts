/**
 * The workspace recorder of one session: takes checkpoints of the files under the workspace
 * root after tool calls, and restores, diffs and exports the tree recorded at an entry.
 *
 * Contract (ours; `docs/workspace.md`):
 * - the recorded tree at the leaf is folded from the session's `workspace.checkpointed` events
 *   (`src/store/workspace/workspace-tree.ts`), plus the checkpoints of calls that ran but whose
 *   results are not logged yet (a parallel batch); a call whose result was logged without its
 *   checkpoint (aborted, or the checkpoint failed) makes the next checkpoint scan everything;
 * - `write` and `edit` check the one path they were given (and its new parent folders); the tools
 *   named in `scanAfter` (default `bash`) scan the whole root: size, mtime, ctime and inode first,
 *   the sha256 only for files that may have changed (`StatCache`);
 * - files over `maxFileBytes` (default 1 MiB) and files read after `maxCheckpointBytes` (default
 *   64 MiB) in one checkpoint are recorded as `skipped` with their size, never dropped silently;
 * - blobs are stored (per tenant) before the checkpoint is handed to the run, which logs it in the
 *   same append as, and before, the call's result; a failure to store throws
 *   `WorkspaceCheckpointError` (the call then ends with an error result);
 * - `sync` compares the disk with the tree at the leaf and records any difference: `baseline`
 *   (anchored before the first entry) when the session has no checkpoint yet, else `user`, anchored
 *   at a new `arbor.workspace` custom entry appended under the leaf (which becomes the leaf; custom
 *   entries are not in the model's context), so no earlier entry's recorded tree ever changes; an
 *   empty folder of a session that recorded files (another host, another folder) gets the tree
 *   recorded at the leaf written into it instead; a fork's first use copies its parent's
 *   checkpoints anchored on its path (`fork`), so it no longer needs its parent;
 * - `restore` records unrecorded work first (`user`), then writes the tree of the entry and logs
 *   `workspace.restored`; until the next checkpoint, "unrecorded work" means a difference from the
 *   restored entry's tree (the leaf need not move with a restore).
 *
 * @example
 * ```ts
 * const recorder = createWorkspaceRecorder({ session, log, options: { root }, append });
 * await recorder.restore(entryId);
 * ```
 */
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { WorkspaceCheckpointError, InvalidArgumentError } from "../../core/errors.ts";
import { applyChanges, diffManifests, sameNode, type PendingWorkspaceCheckpoint, type WorkspaceChange, type WorkspaceManifest, type WorkspaceNode } from "../../core/workspace-manifest.ts";
import type { EventLog, NewEvent } from "../../store/event-log.ts";
import { isEventOfType } from "../../store/events/catalogue.ts";
import { sessionStreamId } from "../../store/events/session-events.ts";
import type { WorkspaceCheckpointedData } from "../../store/events/workspace-events.ts";
import type { NewEntry, SessionHandle } from "../../store/session-types.ts";
import { blobHash, type BlobInput, type WorkspaceBlobStore } from "../../store/workspace/blob-store.ts";
import { checkpointsOf, treeAt } from "../../store/workspace/workspace-tree.ts";
import { GitignoreFilter } from "../../adapters/tools/gitignore-filter.ts";
import { applyToDisk } from "../../adapters/workspace/materialize.ts";
import { scanPath, scanWorkspace, StatCache, type ScanEntry } from "../../adapters/workspace/scan.ts";

/** Workspace checkpoint options (the harness's `workspace`). */
export interface WorkspaceOptions {
  /** The folder whose files are recorded (absolute, or relative to the process's cwd). */
  root: string;
  /** Files larger than this (bytes) are recorded as skipped. Default 1 MiB. */
  maxFileBytes?: number;
  /** Bytes read in one checkpoint; files after that are recorded as skipped. Default 64 MiB. */
  maxCheckpointBytes?: number;
  /** Tools after which the whole root is scanned. Default `["bash"]`. */
  scanAfter?: readonly string[];
}

/** What the recorder needs of its session. */
export interface WorkspaceRecorderConfig {
  session: SessionHandle;
  log: EventLog;
  options: WorkspaceOptions;
  /** Appends events through the session's writer (resolves once committed). */
  append(events: NewEvent[]): Promise<void>;
  /** Appends one entry (it becomes the leaf) and events after it, through the session's writer. */
  appendEntry(entry: NewEntry, events: NewEvent[]): Promise<void>;
}

/** The outcome of a restore. */
export interface WorkspaceRestoreResult {
  /** Paths created, changed or deleted. */
  changed: number;
  /** Set when unrecorded work was found and recorded first (restore that entry to get it back). */
  savedCheckpointId?: string;
  /** The entry the saved checkpoint is anchored at: a new `arbor.workspace` custom entry under the leaf of the time (restore it to get the work back). */
  savedAt?: string | null;
}

/** A session's workspace recorder (see the module contract). */
export interface WorkspaceRecorder {
  readonly root: string;
  sync(): Promise<string | undefined>;
  checkpointFor(toolName: string, args: Record<string, unknown>, toolCallId: string): Promise<PendingWorkspaceCheckpoint | undefined>;
  treeAt(entryId: string | null): Promise<WorkspaceManifest>;
  diff(entryId: string | null): Promise<WorkspaceChange[]>;
  /** `record: false` skips recording unrecorded work first (a fresh fork over its source's recorded folder). */
  restore(entryId: string | null, options?: { record?: boolean }): Promise<WorkspaceRestoreResult>;
  exportTo(entryId: string | null, directory: string): Promise<number>;
}

/** The `customType` of the entry that anchors a checkpoint of unrecorded work (not in the model's context). */
export const WORKSPACE_ENTRY_TYPE = "arbor.workspace";

const DEFAULT_MAX_FILE = 1024 * 1024;
const DEFAULT_MAX_CHECKPOINT = 64 * 1024 * 1024;
/** Earlier versions larger than this are not used as a delta base. */
const DELTA_BASE_MAX = 256 * 1024;

/** Disk state as a manifest, with the bytes read on the way. */
interface DiskTree {
  tree: WorkspaceManifest;
  bytes: Map<string, Buffer>;
}

/**
 * A recorder for `config.session` (see the module contract).
 *
 * @example
 * ```ts
 * const recorder = createWorkspaceRecorder({ session, log, options: { root: "/repo" }, append: (events) => agent.appendRecords(events) });
 * ```
 */
export function createWorkspaceRecorder(config: WorkspaceRecorderConfig): WorkspaceRecorder {
  const { session, log } = config;
  const root = resolve(config.options.root);
  const maxFile = config.options.maxFileBytes ?? DEFAULT_MAX_FILE;
  const maxCheckpoint = config.options.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT;
  const scanAfter = new Set(config.options.scanAfter ?? ["bash"]);
  const blobs: WorkspaceBlobStore | undefined = log.workspaceBlobs;
  if (!blobs) throw new InvalidArgumentError("workspace: this event log keeps no workspace blobs (use the SQLite, PostgreSQL or in-memory log).");
  const tenant = session.view.info.tenant ?? "default";
  const streamId = sessionStreamId(session.id);
  const cache = new StatCache();

  // The session's checkpoints, read incrementally; calls checkpointed but not yet logged.
  const checkpoints: WorkspaceCheckpointedData[] = [];
  let readVersion = 0;
  const pending = new Map<string, WorkspaceChange[]>();
  let dirty = false;
  /** The entry whose recorded tree the folder was last restored to, until the next checkpoint. */
  let materialized: { entryId: string | null } | undefined;

  const refresh = async () => {
    const events = await log.readStream(streamId, { fromVersion: readVersion + 1 });
    for (const event of events) {
      readVersion = event.version;
      if (isEventOfType(event, "workspace.checkpointed")) {
        checkpoints.push(event.data);
        materialized = undefined;
      } else if (isEventOfType(event, "workspace.restored")) materialized = { entryId: event.data.entryId };
      else if (isEventOfType(event, "tool.ended") && pending.has(event.data.toolCallId)) {
        const logged = checkpoints.some((checkpoint) => checkpoint.toolCallId === event.data.toolCallId);
        pending.delete(event.data.toolCallId);
        if (!logged) dirty = true;
      }
    }
  };

  /**
   * A fork's first use copies its parent's checkpoints anchored on the fork's path (entry ids are
   * kept by a fork), so the fork's tree no longer needs its parent.
   */
  let adopted = false;
  const adoptParent = async () => {
    if (adopted) return;
    adopted = true;
    const { parentSessionId } = session.view.info;
    if (checkpoints.length > 0 || !parentSessionId) return;
    const inherited = checkpointsOf(await log.readStream(sessionStreamId(parentSessionId))).filter(
      (checkpoint) => checkpoint.entryId === null || session.view.getEntry(checkpoint.entryId) !== undefined,
    );
    if (inherited.length === 0) return;
    await config.append(inherited.map((checkpoint) => ({ type: "workspace.checkpointed", data: { ...checkpoint, checkpointId: randomUUID(), reason: "fork" as const } })));
    await refresh();
  };

  const recordedAt = async (entryId: string | null): Promise<WorkspaceManifest> => {
    await refresh();
    await adoptParent();
    const path = entryId === null ? [] : session.view.getBranch(entryId);
    return treeAt(path, checkpoints, entryId);
  };
  const recordedNow = async (): Promise<WorkspaceManifest> => {
    let tree = await recordedAt(session.view.leafId);
    for (const changes of pending.values()) tree = applyChanges(tree, changes);
    return tree;
  };

  /** The node for one scanned entry, reading and hashing a file only when the cache cannot tell. */
  const nodeOf = (path: string, entry: ScanEntry, budget: { left: number }, bytes: Map<string, Buffer>): WorkspaceNode => {
    if (entry.kind !== "file") return entry.kind === "dir" ? { kind: "dir", mode: entry.mode } : { kind: "symlink", target: entry.target };
    if (entry.size > maxFile) return { kind: "skipped", size: entry.size, reason: "file_cap" };
    const known = cache.lookup(path, entry);
    if (known) return { kind: "file", blob: known, size: entry.size, mode: entry.mode };
    if (entry.size > budget.left) return { kind: "skipped", size: entry.size, reason: "total_cap" };
    let data: Buffer;
    const readAt = Date.now();
    try {
      data = fs.readFileSync(resolve(root, path));
    } catch {
      return { kind: "skipped", size: entry.size, reason: "file_cap" };
    }
    budget.left -= data.length;
    const hash = blobHash(data);
    bytes.set(hash, data);
    cache.remember(path, { ...entry, size: data.length }, hash, readAt);
    return { kind: "file", blob: hash, size: data.length, mode: entry.mode };
  };

  const diskTree = (): DiskTree => {
    const bytes = new Map<string, Buffer>();
    const budget = { left: maxCheckpoint };
    const tree: WorkspaceManifest = new Map();
    for (const [path, entry] of scanWorkspace(root)) tree.set(path, nodeOf(path, entry, budget, bytes));
    return { tree, bytes };
  };

  /** Stores the blobs `changes` need (deltas against the recorded version of the same path). */
  const store = async (changes: readonly WorkspaceChange[], bytes: Map<string, Buffer>, before: WorkspaceManifest): Promise<number> => {
    const files = changes.flatMap((change) => (change.node?.kind === "file" ? [{ path: change.path, node: change.node }] : []));
    if (files.length === 0) return 0;
    const have = await blobs.has(tenant, files.map((file) => file.node.blob));
    const inputs: BlobInput[] = [];
    for (const { path, node } of files) {
      if (have.has(node.blob) || inputs.some((input) => input.hash === node.blob)) continue;
      const data = bytes.get(node.blob) ?? fs.readFileSync(resolve(root, path));
      if (blobHash(data) !== node.blob) throw new Error(`${path} changed while it was being checkpointed`);
      const previous = before.get(path);
      let base: BlobInput["base"];
      if (previous?.kind === "file" && previous.size <= DELTA_BASE_MAX && previous.blob !== node.blob) {
        base = { hash: previous.blob, data: await blobs.get(tenant, previous.blob).catch(() => Buffer.alloc(0)) };
        if (base.data.length === 0) base = undefined;
      }
      inputs.push({ hash: node.blob, data, ...(base ? { base } : {}) });
    }
    return blobs.put(tenant, inputs);
  };

  const failed = (error: unknown): never => {
    dirty = true;
    if (WorkspaceCheckpointError.isInstance(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new WorkspaceCheckpointError(`The workspace checkpoint failed, so the call's result was not recorded as a success: ${message}`, { cause: error });
  };

  /** Records what differs between the disk and the tree at the leaf, as its own checkpoint. */
  const recordDisk = async (reason: "baseline" | "user"): Promise<{ checkpointId?: string; tree: WorkspaceManifest; entryId?: string | null }> => {
    const recorded = await recordedNow();
    const disk = diskTree();
    // After a restore the folder is expected to hold that entry's tree, not the leaf's.
    const expected = materialized ? await recordedAt(materialized.entryId) : recorded;
    dirty = false;
    if (diffManifests(expected, disk.tree).length === 0) return { tree: disk.tree };
    const changes = diffManifests(recorded, disk.tree);
    if (changes.length === 0) return { tree: disk.tree };
    let storedBytes: number;
    try {
      storedBytes = await store(changes, disk.bytes, recorded);
    } catch (error) {
      return failed(error);
    }
    const checkpointId = randomUUID();
    if (reason === "baseline") {
      // The first sight of the folder: the tree of every entry before any other checkpoint.
      await config.append([{ type: "workspace.checkpointed", data: { checkpointId, entryId: null, reason, changes, storedBytes } }]);
      return { checkpointId, tree: disk.tree, entryId: null };
    }
    // Unrecorded work gets an entry of its own under the leaf, so no earlier entry's tree changes.
    let entryId = randomUUID().slice(0, 8);
    while (session.view.getEntry(entryId)) entryId = randomUUID().slice(0, 8);
    const data: WorkspaceCheckpointedData = { checkpointId, entryId, reason, changes, storedBytes };
    await config.appendEntry({ id: entryId, type: "custom", customType: WORKSPACE_ENTRY_TYPE, data: { checkpointId } }, [{ type: "workspace.checkpointed", data }]);
    return { checkpointId, tree: disk.tree, entryId };
  };

  /** Relative path of a tool's `path` argument, or undefined when it leaves the root. */
  const relativeOf = (value: unknown): string | undefined => {
    if (typeof value !== "string" || value === "") return undefined;
    const absolute = resolve(root, value.startsWith("~") ? value : value);
    const rel = relative(root, absolute);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
    return rel.split(sep).join("/");
  };

  return {
    root,
    async sync() {
      await refresh();
      await adoptParent();
      // An empty folder for a session that recorded files (a continuation on another host or in
      // another folder): put the recorded tree there instead of recording everything as deleted.
      if (checkpoints.length > 0 && scanWorkspace(root).size === 0 && (await recordedAt(session.view.leafId)).size > 0) {
        await this.restore(session.view.leafId, { record: false });
        return undefined;
      }
      return (await recordDisk(checkpoints.length > 0 ? "user" : "baseline")).checkpointId;
    },
    async checkpointFor(toolName, args, toolCallId) {
      try {
        const full = dirty || scanAfter.has(toolName);
        const targeted = !full && (toolName === "write" || toolName === "edit") ? relativeOf(args.path) : undefined;
        if (!full && targeted === undefined) return undefined;
        const recorded = await recordedNow();
        let changes: WorkspaceChange[];
        let bytes: Map<string, Buffer>;
        if (full) {
          const disk = diskTree();
          dirty = false;
          changes = diffManifests(recorded, disk.tree);
          bytes = disk.bytes;
        } else {
          bytes = new Map();
          const budget = { left: maxCheckpoint };
          const filter = new GitignoreFilter(root);
          const paths: string[] = [];
          for (let path = targeted!; path !== "." && path !== ""; path = dirname(path)) paths.unshift(path);
          changes = [];
          let throughLink = false;
          for (const [at, path] of paths.entries()) {
            const entry = scanPath(root, path);
            // A parent that is not a real folder (a symlink) sends the write elsewhere: scan everything.
            if (at < paths.length - 1 && entry?.kind !== "dir") throughLink = true;
            if (throughLink) break;
            if (entry && filter.isIgnoredDeep(resolve(root, path), entry.kind === "dir")) break;
            const node = entry ? nodeOf(path, entry, budget, bytes) : null;
            if (!sameNode(recorded.get(path), node)) changes.push({ path, node });
          }
          if (throughLink) {
            const disk = diskTree();
            dirty = false;
            changes = diffManifests(recorded, disk.tree);
            bytes = disk.bytes;
          }
        }
        if (changes.length === 0) return undefined;
        const storedBytes = await store(changes, bytes, recorded);
        pending.set(toolCallId, changes);
        return { checkpointId: randomUUID(), changes, storedBytes };
      } catch (error) {
        return failed(error);
      }
    },
    treeAt: (entryId) => recordedAt(entryId),
    async diff(entryId) {
      const target = await recordedAt(entryId);
      return diffManifests(diskTree().tree, target);
    },
    async restore(entryId, restoreOptions = {}) {
      const saved = restoreOptions.record === false ? { tree: diskTree().tree } : await recordDisk("user");
      const target = await recordedAt(entryId);
      const changes = diffManifests(saved.tree, target);
      const changed = await applyToDisk(root, changes, (hash) => blobs.get(tenant, hash));
      for (const change of changes) cache.forget(change.path);
      await config.append([
        { type: "workspace.restored", data: { entryId, changed, ...(saved.checkpointId ? { savedCheckpointId: saved.checkpointId } : {}) } },
      ]);
      return { changed, ...(saved.checkpointId ? { savedCheckpointId: saved.checkpointId, savedAt: saved.entryId ?? null } : {}) };
    },
    async exportTo(entryId, directory) {
      const target = await recordedAt(entryId);
      fs.mkdirSync(directory, { recursive: true });
      return applyToDisk(resolve(directory), diffManifests(new Map(), target), (hash) => blobs.get(tenant, hash));
    },
  };
}

/**
 * The workspace recorder of one session (`docs/workspace.md`): checkpoints files under the root after tool calls (`write`/`edit` their path,
 * `scanAfter` tools the whole root, hashing only files that may have changed), restores, diffs and exports the tree recorded at an entry. Oversized
 * files are recorded `skipped`, never dropped; blobs are stored before the checkpoint is logged with the call's result (`WorkspaceCheckpointError`
 * otherwise). `sync` records outside changes under a new entry, so no earlier entry's tree ever changes.
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
import { planRestore, type LeftAlonePath } from "./restore-plan.ts";
import { scanPath, StatCache, WorkspaceScanner, type ScanEntry } from "../../adapters/workspace/scan.ts";

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
  /**
   * Paths the restore did not touch although the recorded tree differs there (the log has not seen what is on disk): ignored by the `.gitignore`
   * files on disk now, too large to record, ignored by the restored entry's own `.gitignore`, or a folder still holding such files. Empty when none.
   */
  leftAlone: LeftAlonePath[];
}

/** A session's workspace recorder (see the module contract). */
export interface WorkspaceRecorder {
  readonly root: string;
  sync(): Promise<string | undefined>;
  /**
   * A continued run's start (durable execution): puts the folder at the tree recorded at the leaf, the last committed checkpoint. An empty folder
   * gets it written; a folder that differs is first recorded as unrecorded work (`user`, restorable), then restored; a session that recorded nothing
   * yet is synced as at open.
   */
  continueAtLeaf(): Promise<void>;
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

/** A recorder for `config.session` (see the module contract). */
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
  const readBlob = (hash: string): Promise<Buffer> => blobs.get(tenant, hash);
  const scanner = new WorkspaceScanner(root);

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

  /** A fork's first use copies its parent's checkpoints anchored on its path (entry ids are kept by a fork), so it no longer needs its parent. */
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

  /** Folded trees by entry, valid while no checkpoint is added (an entry's path never changes). Read-only. */
  const folded = { count: -1, trees: new Map<string | null, WorkspaceManifest>() };
  const recordedAt = async (entryId: string | null): Promise<WorkspaceManifest> => {
    await refresh();
    await adoptParent();
    if (folded.count !== checkpoints.length) folded.trees.clear();
    folded.count = checkpoints.length;
    let tree = folded.trees.get(entryId);
    if (!tree) {
      tree = treeAt(entryId === null ? [] : session.view.getBranch(entryId), checkpoints, entryId);
      if (folded.trees.size >= 8) folded.trees.clear();
      folded.trees.set(entryId, tree);
    }
    return tree;
  };
  /** The tree at `entryId` with the checkpoints of calls not logged yet. */
  const heldNow = async (entryId: string | null): Promise<WorkspaceManifest> => {
    let tree = await recordedAt(entryId);
    for (const changes of pending.values()) tree = applyChanges(tree, changes);
    return tree;
  };
  const recordedNow = (): Promise<WorkspaceManifest> => heldNow(session.view.leafId);

  /** The node for one scanned entry, reading and hashing a file only when the cache cannot tell. */
  const nodeOf = (path: string, entry: ScanEntry, budget: { left: number }, bytes: Map<string, Buffer>, prior?: WorkspaceNode): WorkspaceNode => {
    if (entry.kind === "dir") return prior?.kind === "dir" && prior.mode === entry.mode ? prior : { kind: "dir", mode: entry.mode };
    if (entry.kind === "symlink") return { kind: "symlink", target: entry.target };
    if (entry.size > maxFile) return { kind: "skipped", size: entry.size, reason: "file_cap" };
    const known = cache.lookup(path, entry);
    // An unchanged file keeps its recorded node (no allocation; the comparison is by identity).
    if (known) return prior?.kind === "file" && prior.blob === known && prior.size === entry.size && prior.mode === entry.mode ? prior : { kind: "file", blob: known, size: entry.size, mode: entry.mode };
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

  /** The disk as a manifest; nodes equal to `like`'s (the recorded tree) are `like`'s own objects. */
  const diskTree = (like?: WorkspaceManifest): DiskTree => {
    const bytes = new Map<string, Buffer>();
    const budget = { left: maxCheckpoint };
    const tree: WorkspaceManifest = new Map();
    for (const [path, entry] of scanner.scan()) tree.set(path, nodeOf(path, entry, budget, bytes, like?.get(path)));
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
    throw new WorkspaceCheckpointError(
      `The call ran, but its workspace checkpoint failed, so its result is not recorded as a success; the files it changed are recorded by the next checkpoint. Cause: ${message}`,
      { cause: error },
    );
  };

  /** Records what differs between the disk and the tree at the leaf, as its own checkpoint. */
  const recordDisk = async (reason: "baseline" | "user"): Promise<{ checkpointId?: string; tree: WorkspaceManifest; entryId?: string | null }> => {
    const recorded = await recordedNow();
    const disk = diskTree(recorded);
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
      if (checkpoints.length > 0 && scanner.scan().size === 0 && (await recordedAt(session.view.leafId)).size > 0) {
        await this.restore(session.view.leafId, { record: false });
        return undefined;
      }
      return (await recordDisk(checkpoints.length > 0 ? "user" : "baseline")).checkpointId;
    },
    async continueAtLeaf() {
      await refresh();
      await adoptParent();
      if (checkpoints.length === 0) {
        await this.sync();
        return;
      }
      const leaf = session.view.leafId;
      const target = await recordedAt(leaf);
      const disk = diskTree().tree;
      if (diffManifests(disk, target).length === 0) return;
      await this.restore(leaf, { record: disk.size > 0 });
    },
    async checkpointFor(toolName, args, toolCallId) {
      try {
        const full = dirty || scanAfter.has(toolName);
        const targeted = !full && (toolName === "write" || toolName === "edit") ? relativeOf(args.path) : undefined;
        if (!full && targeted === undefined) return undefined;
        const recorded = await recordedNow();
        // After a restore that did not move the leaf, the folder holds the restored entry's tree:
        // a targeted change applies to that, and the checkpoint takes the leaf's tree there.
        const onDisk = materialized && materialized.entryId !== session.view.leafId ? await heldNow(materialized.entryId) : recorded;
        let changes: WorkspaceChange[];
        let bytes: Map<string, Buffer>;
        if (full) {
          const disk = diskTree(recorded);
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
            if (!sameNode(onDisk.get(path), node)) changes.push({ path, node });
          }
          if (onDisk !== recorded) changes = diffManifests(recorded, applyChanges(onDisk, changes));
          if (throughLink) {
            const disk = diskTree(recorded);
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
    treeAt: async (entryId) => new Map(await recordedAt(entryId)),
    async diff(entryId) {
      const target = await recordedAt(entryId);
      return (await planRestore(root, diskTree().tree, target, readBlob)).changes;
    },
    async restore(entryId, restoreOptions = {}) {
      const saved = restoreOptions.record === false ? { tree: diskTree().tree } : await recordDisk("user");
      const target = await recordedAt(entryId);
      // Never a path the log has not seen on disk (ignored now, too large): those stay as they are, and are reported.
      const plan = await planRestore(root, saved.tree, target, readBlob);
      const applied = await applyToDisk(root, plan.changes, readBlob);
      for (const change of plan.changes) cache.forget(change.path);
      const leftAlone = [...plan.leftAlone, ...applied.notEmpty.map((path) => ({ path, reason: "not_empty" as const }))];
      const changed = applied.changed;
      await config.append([
        { type: "workspace.restored", data: { entryId, changed, ...(saved.checkpointId ? { savedCheckpointId: saved.checkpointId } : {}) } },
      ]);
      return { changed, leftAlone, ...(saved.checkpointId ? { savedCheckpointId: saved.checkpointId, savedAt: saved.entryId ?? null } : {}) };
    },
    async exportTo(entryId, directory) {
      const target = await recordedAt(entryId);
      fs.mkdirSync(directory, { recursive: true });
      return (await applyToDisk(resolve(directory), diffManifests(new Map(), target), readBlob)).changed;
    },
  };
}

/**
 * Projection snapshots (checkpoints) of sessions in their own SQLite file (ours), so a large session opens without re-folding its stream. A
 * snapshot is a CACHE: the tree state at a `version` plus every entry's JSON (read lazily); it is used only while the stream keeps its first event
 * id and reached `version`, otherwise deleted. Writes are incremental and atomic (WAL, `synchronous = NORMAL`: a crash costs only time); `delete`
 * removes a session's rows (`secure_delete` on); another snapshot schema version is `LogSchemaError`.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import type { SessionEntry } from "../../core/entries.ts";
import { LogSchemaError } from "../../core/errors.ts";
import type { EntryLoader } from "./lazy-entries.ts";
import type { TreeSnapshot } from "./session-tree.ts";

const SCHEMA_VERSION = 1;

const SEPARATOR = "\u0001";
const NULL_MARK = "\u0000";

/** A string column as one joined string ("C…"), or JSON ("J…") when a value holds a marker. */
function encodeColumn(values: readonly (string | null)[]): string {
  const plain = values.every((value) => value === null || (value !== NULL_MARK && !value.includes(SEPARATOR)));
  return plain ? `C${values.map((value) => value ?? NULL_MARK).join(SEPARATOR)}` : `J${JSON.stringify(values)}`;
}

function decodeColumn(text: string, count: number): (string | null)[] {
  if (text[0] === "J") return JSON.parse(text.slice(1)) as (string | null)[];
  if (count === 0) return [];
  return text
    .slice(1)
    .split(SEPARATOR)
    .map((value) => (value === NULL_MARK ? null : value));
}

type Skeleton = TreeSnapshot["skeleton"];

function encodeSkeleton(skeleton: Skeleton): string[] {
  return [encodeColumn(skeleton.ids), encodeColumn(skeleton.parents), encodeColumn(skeleton.types), encodeColumn(skeleton.roles), encodeColumn(skeleton.timestamps)];
}

function decodeSkeleton(columns: string[], count: number): Skeleton {
  const [ids, parents, types, roles, timestamps] = columns.map((column) => decodeColumn(column, count));
  return { ids: ids as string[], parents, types: types as string[], roles, timestamps: timestamps as string[] };
}

/** A stored snapshot with the identity of the stream it was taken from. */
export interface StoredSnapshot {
  snapshot: TreeSnapshot;
  /** The stream's first event id (detects a deleted and re-created session). */
  firstEventId: string;
  /** Entries stored (append positions 0 … entryCount-1). */
  entryCount: number;
}

/** Stores projection snapshots. Synchronous (entry reads happen inside synchronous accessors). */
export interface SessionSnapshotStore {
  read(sessionId: string): StoredSnapshot | undefined;
  /** Reads entries of the stored snapshot of `sessionId` by append position. */
  loader(sessionId: string): EntryLoader;
  /** Stores `snapshot`; `entries` are the entries at append positions `fromSeq`, `fromSeq + 1`, … (those not stored yet). Atomic. */
  write(sessionId: string, snapshot: TreeSnapshot, firstEventId: string, fromSeq: number, entries: readonly SessionEntry[]): void;
  delete(sessionId: string): void;
  close(): void;
}

/** Options of {@link createSqliteSnapshotStore}. */
export interface SqliteSnapshotStoreOptions {
  /** File path or `:memory:`. */
  path: string;
}

/**
 * Opens (or creates) a snapshot store in a SQLite file (see the module contract). Throws `LogSchemaError` for a file of another snapshot schema
 * version.
 *
 * @example
 * ```ts
 * const store = createSqliteSnapshotStore({ path: ":memory:" });
 * ```
 */
export function createSqliteSnapshotStore(options: SqliteSnapshotStoreOptions): SessionSnapshotStore {
  if (options.path !== ":memory:") mkdirSync(dirname(options.path), { recursive: true });
  const db = new Database(options.path);
  let version: number;
  let tables: number;
  try {
    version = db.pragma("user_version", { simple: true }) as number;
    tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number;
  } catch (error) {
    db.close();
    throw new LogSchemaError(`${options.path} is not a SQLite file (${(error as Error).message}); it was not modified.`, { cause: error });
  }
  if (version !== SCHEMA_VERSION && !(version === 0 && tables === 0)) {
    db.close();
    throw new LogSchemaError(`${options.path} is not an Arbor snapshot file of schema version ${SCHEMA_VERSION} (found user_version ${version}); it was not modified.`);
  }
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("secure_delete = ON");
  db.exec(`
    CREATE TABLE IF NOT EXISTS session_snapshots (
      session_id TEXT PRIMARY KEY,
      first_event_id TEXT NOT NULL,
      version INTEGER NOT NULL,
      entry_count INTEGER NOT NULL,
      state TEXT NOT NULL,
      skeleton_ids TEXT NOT NULL,
      skeleton_parents TEXT NOT NULL,
      skeleton_types TEXT NOT NULL,
      skeleton_roles TEXT NOT NULL,
      skeleton_timestamps TEXT NOT NULL,
      written_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS session_snapshot_entries (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      entry TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
  `);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);

  const selectSnapshot = db.prepare(
    "SELECT first_event_id, entry_count, state, skeleton_ids, skeleton_parents, skeleton_types, skeleton_roles, skeleton_timestamps FROM session_snapshots WHERE session_id = ?",
  );
  const selectCount = db.prepare("SELECT entry_count FROM session_snapshots WHERE session_id = ?").pluck();
  const selectEntry = db.prepare("SELECT entry FROM session_snapshot_entries WHERE session_id = ? AND seq = ?").pluck();
  const selectEntries = db.prepare("SELECT entry FROM session_snapshot_entries WHERE session_id = ? AND seq < ? ORDER BY seq").pluck();
  const selectRange = db.prepare("SELECT seq, entry FROM session_snapshot_entries WHERE session_id = ? AND seq BETWEEN ? AND ?").raw();
  const upsertSnapshot = db.prepare(
    "INSERT OR REPLACE INTO session_snapshots (session_id, first_event_id, version, entry_count, state, skeleton_ids, skeleton_parents, skeleton_types, skeleton_roles, skeleton_timestamps, written_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const upsertEntry = db.prepare("INSERT OR REPLACE INTO session_snapshot_entries (session_id, seq, entry) VALUES (?, ?, ?)");
  const deleteEntries = db.prepare("DELETE FROM session_snapshot_entries WHERE session_id = ?");
  const deleteSnapshot = db.prepare("DELETE FROM session_snapshots WHERE session_id = ?");

  const write = db.transaction((sessionId: string, snapshot: TreeSnapshot, firstEventId: string, fromSeq: number, entries: readonly SessionEntry[]) => {
    entries.forEach((entry, offset) => upsertEntry.run(sessionId, fromSeq + offset, JSON.stringify(entry)));
    const { skeleton, ...state } = snapshot;
    upsertSnapshot.run(sessionId, firstEventId, snapshot.version, fromSeq + entries.length, JSON.stringify(state), ...encodeSkeleton(skeleton), new Date().toISOString());
  });
  const remove = db.transaction((sessionId: string) => {
    deleteEntries.run(sessionId);
    deleteSnapshot.run(sessionId);
  });

  return {
    read(sessionId) {
      const row = selectSnapshot.get(sessionId) as Record<string, string> & { entry_count: number } | undefined;
      if (!row) return undefined;
      const skeleton = decodeSkeleton(
        [row.skeleton_ids, row.skeleton_parents, row.skeleton_types, row.skeleton_roles, row.skeleton_timestamps],
        row.entry_count,
      );
      const state = JSON.parse(row.state) as Omit<TreeSnapshot, "skeleton">;
      return { snapshot: { ...state, skeleton }, firstEventId: row.first_event_id, entryCount: row.entry_count };
    },
    loader(sessionId) {
      const count = (selectCount.get(sessionId) as number | undefined) ?? 0;
      return {
        load(seq) {
          const text = selectEntry.get(sessionId, seq) as string | undefined;
          if (text === undefined) throw new LogSchemaError(`Snapshot of session ${sessionId} has no entry at position ${seq}; delete the snapshot file to rebuild it.`);
          return JSON.parse(text) as SessionEntry;
        },
        loadMany(seqs) {
          if (seqs.length === 0) return [];
          let low = seqs[0];
          let high = seqs[0];
          for (const seq of seqs) {
            if (seq < low) low = seq;
            if (seq > high) high = seq;
          }
          // A context's entries are mostly contiguous: one range scan, unless it would read far more than asked.
          if (high - low + 1 > seqs.length * 4) return seqs.map((seq) => this.load(seq));
          const texts = new Map<number, string>();
          for (const [seq, text] of selectRange.all(sessionId, low, high) as [number, string][]) texts.set(seq, text);
          return seqs.map((seq) => {
            const text = texts.get(seq);
            return text === undefined ? this.load(seq) : (JSON.parse(text) as SessionEntry);
          });
        },
        loadAll() {
          return (selectEntries.all(sessionId, count) as string[]).map((text) => JSON.parse(text) as SessionEntry);
        },
      };
    },
    write(sessionId, snapshot, firstEventId, fromSeq, entries) {
      write(sessionId, snapshot, firstEventId, fromSeq, entries);
    },
    delete(sessionId) {
      remove(sessionId);
    },
    close() {
      db.close();
    },
  };
}

/**
 * The snapshot file kept beside the SQLite log at `logPath` (ours): `x.db` → `x.snapshots.db`, any other name gets `.snapshots.db` appended. The CLI
 * and the harness open it by default for the logs they open themselves.
 */
export function snapshotPathFor(logPath: string): string {
  return logPath.endsWith(".db") ? `${logPath.slice(0, -3)}.snapshots.db` : `${logPath}.snapshots.db`;
}

/**
 * Opens the snapshot store beside the SQLite log at `logPath` ({@link snapshotPathFor}), or returns undefined when that file cannot be used (another
 * schema version, corrupt, unwritable): snapshots are a cache, so a bad one only costs opening time and is never fatal (ours). The file is left as it
 * is in that case. `":memory:"` logs get no snapshot store.
 */
export function openSnapshotsBeside(logPath: string): SessionSnapshotStore | undefined {
  if (logPath === ":memory:" || logPath === "") return undefined;
  try {
    return createSqliteSnapshotStore({ path: snapshotPathFor(logPath) });
  } catch {
    return undefined;
  }
}

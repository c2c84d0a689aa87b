/**
 * The SQLite log's session index (ours; the contract is `session-index.ts`): `arbor_entry_index`, `arbor_entry_streams` and `arbor_session_heads`,
 * created when a log is opened for writing (no schema version change). The writer calls {@link SqliteSessionIndex.appended} and
 * {@link SqliteSessionIndex.deleted} inside each append's or delete's transaction; the context chunks (`sqlite-context-chunks.ts`) share those hooks.
 */
import type Database from "better-sqlite3";
import { KNOWN_ENTRY_TYPES, type SessionEntry } from "../../core/entries.ts";
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import { SESSION_STREAM_PREFIX } from "../events/session-events.ts";
import type { EventRecord } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import type { IndexedEntry, SessionIndex, SessionIndexStatus } from "../session/session-index.ts";
import { createSqliteContextChunks } from "./sqlite-context-chunks.ts";
import type { LogCipher } from "../crypto/log-cipher.ts";
import { hasTables } from "./sqlite-tables.ts";

const KNOWN = JSON.stringify(KNOWN_ENTRY_TYPES);

const TABLES = `
  CREATE TABLE IF NOT EXISTS arbor_entry_index (
    stream_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    parent_id TEXT,
    parent_seq INTEGER,
    run_start INTEGER NOT NULL,
    kind TEXT NOT NULL,
    role TEXT,
    PRIMARY KEY (stream_id, seq)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS arbor_entry_index_id ON arbor_entry_index (stream_id, entry_id);
  CREATE INDEX IF NOT EXISTS arbor_entry_index_kind ON arbor_entry_index (stream_id, kind, seq);
  CREATE INDEX IF NOT EXISTS arbor_entry_index_parent ON arbor_entry_index (stream_id, parent_id);
  CREATE TABLE IF NOT EXISTS arbor_entry_streams (
    stream_id TEXT PRIMARY KEY,
    first_event_id TEXT NOT NULL,
    indexed_version INTEGER NOT NULL,
    entries INTEGER NOT NULL,
    unusual INTEGER NOT NULL,
    unknown INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS arbor_session_heads (
    stream_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    state TEXT NOT NULL
  );
`;

const ROW = "seq, entry_id AS id, version, parent_seq AS parentSeq, run_start AS runStart, kind, role";
const EVENT_COLUMNS = `e.global_position AS globalPosition, e.event_id AS eventId, e.stream_id AS streamId, e.version, e.type,
  e.schema_version AS schemaVersion, e.time, e.data AS dataJson, e.metadata AS metadataJson`;

/** The SQLite session index plus the writer's hooks. */
export interface SqliteSessionIndex extends SessionIndex {
  /** Indexes the events just inserted into `streamId` (inside the append's transaction). */
  appended(streamId: string, previousVersion: number, events: readonly StoredEvent[]): void;
  /** Deletes the stream's rows and head (inside the delete's transaction). */
  deleted(streamId: string): void;
}

/** Options of {@link createSqliteSessionIndex}. */
export interface SqliteSessionIndexOptions {
  /** False for read-only logs: no tables are created, nothing is written. */
  writable: boolean;
  /**
   * An encrypted log's cipher (`crypto/log-cipher.ts`): stored records are opened with it, heads and context chunks are sealed with the session's
   * key.
   */
  cipher?: Pick<LogCipher, "open" | "sealText" | "sealTextBytes" | "openText">;
}

interface StatusRow {
  first_event_id: string;
  indexed_version: number;
  entries: number;
  unusual: number;
  unknown: number;
}

/** The session index of one SQLite connection, or undefined when the file has no index tables and cannot get them (read-only). */
export function createSqliteSessionIndex(db: Database.Database, options: SqliteSessionIndexOptions): SqliteSessionIndex | undefined {
  if (options.writable) db.exec(TABLES);
  else if (!hasTables(db, "arbor_entry_index", "arbor_entry_streams", "arbor_session_heads")) return undefined;
  const writable = options.writable;
  const cipher = options.cipher;
  const decode = cipher ? (record: EventRecord) => toStoredEvent(cipher.open(record)) : toStoredEvent;
  const chunks = createSqliteContextChunks(db, { writable, ...(cipher ? { cipher } : {}) });

  const selectStatus = db.prepare("SELECT first_event_id, indexed_version, entries, unusual, unknown FROM arbor_entry_streams WHERE stream_id = ?");
  const selectVersion = db.prepare("SELECT version FROM streams WHERE stream_id = ?").pluck();
  const selectFirstEventId = db.prepare("SELECT event_id FROM events WHERE stream_id = ? AND version = 1").pluck();
  const upsertStatus = db.prepare(
    "INSERT INTO arbor_entry_streams (stream_id, first_event_id, indexed_version, entries, unusual, unknown) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (stream_id) DO UPDATE SET first_event_id = excluded.first_event_id, indexed_version = excluded.indexed_version, entries = excluded.entries, unusual = excluded.unusual, unknown = excluded.unknown",
  );
  const insertRow = db.prepare(
    "INSERT INTO arbor_entry_index (stream_id, seq, entry_id, version, parent_id, parent_seq, run_start, kind, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const selectById = db.prepare(`SELECT ${ROW} FROM arbor_entry_index INDEXED BY arbor_entry_index_id WHERE stream_id = ? AND entry_id = ? ORDER BY seq DESC LIMIT 1`);
  const selectAt = db.prepare(`SELECT ${ROW} FROM arbor_entry_index WHERE stream_id = ? AND seq = ?`);
  // Kind look-ups go through the (stream_id, kind, seq) index: a kind absent from a long path costs one seek, not a scan.
  const selectLast = db.prepare(
    `SELECT ${ROW} FROM arbor_entry_index INDEXED BY arbor_entry_index_kind WHERE stream_id = ? AND kind = ? AND seq BETWEEN ? AND ? ORDER BY seq DESC LIMIT 1`,
  );
  const selectLastRole = db.prepare(
    `SELECT ${ROW} FROM arbor_entry_index INDEXED BY arbor_entry_index_kind WHERE stream_id = ? AND kind = ? AND seq BETWEEN ? AND ? AND role = ? ORDER BY seq DESC LIMIT 1`,
  );
  const selectRange = db.prepare(`SELECT ${ROW} FROM arbor_entry_index WHERE stream_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`);
  const selectRangeKind = db.prepare(
    `SELECT ${ROW} FROM arbor_entry_index INDEXED BY arbor_entry_index_kind WHERE stream_id = ? AND kind = ? AND seq BETWEEN ? AND ? ORDER BY seq`,
  );
  const selectRangeUnknown = db.prepare(
    `SELECT ${ROW} FROM arbor_entry_index WHERE stream_id = ? AND seq BETWEEN ? AND ? AND kind NOT IN (SELECT value FROM json_each(?)) ORDER BY seq`,
  );
  const selectChildren = db.prepare(`SELECT ${ROW} FROM arbor_entry_index INDEXED BY arbor_entry_index_parent WHERE stream_id = ? AND parent_id = ? ORDER BY seq`);
  const selectEvents = db.prepare(
    `SELECT i.seq AS seq, ${EVENT_COLUMNS.replace("e.metadata AS metadataJson", "'{}' AS metadataJson")} FROM arbor_entry_index i JOIN events e ON e.stream_id = i.stream_id AND e.version = i.version
      WHERE i.stream_id = ? AND i.seq BETWEEN ? AND ? ORDER BY i.seq`,
  );
  // `entry.appended` has no upcaster (events/upcast.ts), so its stored data is read as it is.
  const selectEntryData = db
    .prepare(`SELECT i.seq, e.data${cipher ? ", e.event_id, e.type, e.schema_version, e.version" : ""} FROM arbor_entry_index i JOIN events e ON e.stream_id = i.stream_id AND e.version = i.version WHERE i.stream_id = ? AND i.seq BETWEEN ? AND ? ORDER BY i.seq`)
    .raw();
  /** The data JSON of a row of `selectEntryData` (opened on an encrypted log). */
  const entryText = cipher
    ? (streamId: string, row: unknown[]): string =>
        cipher.open({ streamId, globalPosition: 0, version: row[5] as number, time: "", metadataJson: "{}", dataJson: row[1] as string, eventId: row[2] as string, type: row[3] as string, schemaVersion: row[4] as number }).dataJson
    : (_streamId: string, row: unknown[]): string => row[1] as string;
  /** The entry of one stored `entry.appended`; corrupt JSON is read through the log's own path, which names where it is. */
  const parseEntry = (streamId: string, seq: number, text: string): SessionEntry => {
    try {
      return (JSON.parse(text) as { entry: SessionEntry }).entry;
    } catch (error) {
      const [record] = selectEvents.all(streamId, seq, seq) as EventRecord[];
      const event = decode(record);
      if (isEventOfType(event, "entry.appended")) return event.data.entry;
      throw error;
    }
  };
  const selectStream = db.prepare(
    `SELECT ${EVENT_COLUMNS.replaceAll("e.", "")} FROM events WHERE stream_id = ? AND version >= ? ORDER BY version`,
  );
  const selectHead = db.prepare("SELECT version, state FROM arbor_session_heads WHERE stream_id = ?");
  const upsertHead = db.prepare(
    "INSERT INTO arbor_session_heads (stream_id, version, state) VALUES (?, ?, ?) ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, state = excluded.state WHERE excluded.version >= arbor_session_heads.version",
  );
  const deleteRows = db.prepare("DELETE FROM arbor_entry_index WHERE stream_id = ?");
  const deleteStatus = db.prepare("DELETE FROM arbor_entry_streams WHERE stream_id = ?");
  const deleteHead = db.prepare("DELETE FROM arbor_session_heads WHERE stream_id = ?");

  const known = new Set<string>(KNOWN_ENTRY_TYPES);

  /** Indexes `events` after `status` (mutated). Rows are looked up in SQL (this transaction sees its own inserts). */
  const indexEvents = (streamId: string, status: StatusRow, events: readonly StoredEvent[]): void => {
    const recent: SessionEntry[] = [];
    for (const event of events) {
      if (isEventOfType(event, "entry.appended")) {
        const entry = event.data.entry;
        const seq = status.entries;
        let parentSeq: number | null = null;
        let runStart = seq;
        if (entry.parentId !== null) {
          const parent = entry.parentId === entry.id ? undefined : (selectById.get(streamId, entry.parentId) as IndexedEntry | undefined);
          if (parent) {
            parentSeq = parent.seq;
            if (parent.seq === seq - 1) runStart = parent.runStart;
          } else {
            status.unusual += 1;
          }
        }
        if (selectById.get(streamId, entry.id) !== undefined) status.unusual += 1;
        if (!known.has(entry.type)) status.unknown += 1;
        const role = entry.type === "message" ? ((entry as { message?: { role?: unknown } }).message?.role ?? null) : null;
        insertRow.run(streamId, seq, entry.id, event.version, entry.parentId, parentSeq, runStart, entry.type, typeof role === "string" ? role : null);
        status.entries += 1;
        recent.push(entry);
        if (writable) chunks?.indexed(streamId, status.first_event_id, seq, recent);
      }
      status.indexed_version = event.version;
    }
    upsertStatus.run(streamId, status.first_event_id, status.indexed_version, status.entries, status.unusual, status.unknown);
  };

  const readStream = (streamId: string, fromVersion: number): StoredEvent[] => (selectStream.all(streamId, fromVersion) as EventRecord[]).map(decode);

  /** The stored status when it belongs to the stream's current incarnation (same first event). */
  const currentStatus = (streamId: string): StatusRow | undefined => {
    const row = selectStatus.get(streamId) as StatusRow | undefined;
    return row && row.first_event_id === selectFirstEventId.get(streamId) ? row : undefined;
  };
  const catchUp = db.transaction((streamId: string): void => {
    const status = currentStatus(streamId) ?? { first_event_id: selectFirstEventId.get(streamId) as string, indexed_version: 0, entries: 0, unusual: 0, unknown: 0 };
    if (status.indexed_version === 0) {
      deleteRows.run(streamId);
      chunks?.deleted(streamId);
    }
    indexEvents(streamId, status, readStream(streamId, status.indexed_version + 1));
  });

  const statusOf = (row: StatusRow, streamVersion: number): SessionIndexStatus => ({
    indexedVersion: row.indexed_version,
    streamVersion,
    entries: row.entries,
    unusual: row.unusual,
    unknown: row.unknown,
  });

  return {
    appended(streamId, previousVersion, events) {
      if (!streamId.startsWith(SESSION_STREAM_PREFIX) || events.length === 0) return;
      const status = selectStatus.get(streamId) as StatusRow | undefined;
      if (previousVersion === 0) {
        if (status) deleteRows.run(streamId);
        // Unconditionally: an earlier Arbor deletes streams without knowing about chunks.
        if (writable) chunks?.deleted(streamId);
        indexEvents(streamId, { first_event_id: events[0].eventId, indexed_version: 0, entries: 0, unusual: 0, unknown: 0 }, events);
        return;
      }
      // Behind (written by an earlier Arbor) or never indexed: `ensure` catches it up later.
      if (!status || status.indexed_version !== previousVersion) return;
      indexEvents(streamId, status, events);
    },
    deleted(streamId) {
      deleteRows.run(streamId);
      chunks?.deleted(streamId);
      deleteStatus.run(streamId);
      deleteHead.run(streamId);
    },
    ensure(streamId) {
      const streamVersion = (selectVersion.get(streamId) as number | undefined) ?? 0;
      if (streamVersion === 0) return undefined;
      let row = currentStatus(streamId);
      if (!row || row.indexed_version < streamVersion) {
        if (!writable) return undefined;
        catchUp.immediate(streamId);
        row = selectStatus.get(streamId) as StatusRow;
      }
      return statusOf(row, streamVersion);
    },
    byId: (streamId, id) => selectById.get(streamId, id) as IndexedEntry | undefined,
    at: (streamId, seq) => selectAt.get(streamId, seq) as IndexedEntry | undefined,
    lastOf(streamId, kinds, from, to, role) {
      let last: IndexedEntry | undefined;
      for (const kind of kinds) {
        const row = (role === undefined ? selectLast.get(streamId, kind, from, to) : selectLastRole.get(streamId, kind, from, to, role)) as IndexedEntry | undefined;
        if (row && (!last || row.seq > last.seq)) last = row;
      }
      return last;
    },
    inRange(streamId, from, to, kinds) {
      if (kinds === undefined) return selectRange.all(streamId, from, to) as IndexedEntry[];
      if (kinds === "unknown") return selectRangeUnknown.all(streamId, from, to, KNOWN) as IndexedEntry[];
      const rows = kinds.flatMap((kind) => selectRangeKind.all(streamId, kind, from, to) as IndexedEntry[]);
      return kinds.length > 1 ? rows.sort((a, b) => a.seq - b.seq) : rows;
    },
    children: (streamId, parentId) => selectChildren.all(streamId, parentId) as IndexedEntry[],
    entries(streamId, rows) {
      const out: SessionEntry[] = new Array(rows.length);
      let start = 0;
      while (start < rows.length) {
        // One range read per ascending stretch of rows that is dense enough (it reads at most 4× the rows it keeps).
        let end = start;
        while (end + 1 < rows.length && rows[end + 1].seq > rows[end].seq && rows[end + 1].seq - rows[start].seq + 1 <= (end + 2 - start) * 4) end += 1;
        // Rows come back in seq order, as the stretch: a merge, no lookup table.
        let position = start;
        for (const row of selectEntryData.all(streamId, rows[start].seq, rows[end].seq) as unknown[][]) {
          const seq = row[0] as number;
          while (position <= end && rows[position].seq < seq) position += 1;
          if (position > end) break;
          if (rows[position].seq !== seq) continue;
          out[position] = parseEntry(streamId, seq, entryText(streamId, row));
          position += 1;
        }
        start = end + 1;
      }
      return out;
    },
    readStream,
    head(streamId) {
      const head = selectHead.get(streamId) as { version: number; state: string } | undefined;
      return head && cipher ? { version: head.version, state: cipher.openText(streamId, `head@${head.version}`, head.state) } : head;
    },
    writeHead(streamId, version, state) {
      if (writable) upsertHead.run(streamId, version, cipher ? cipher.sealText(streamId, `head@${version}`, state) : state);
    },
    ...(chunks ? { contextChunks: chunks.read } : {}),
  };
}

/**
 * The session index (ours): what a log keeps beside the events so that opening a session costs O(its context), not O(the session); the SQLite log
 * keeps it (`sqlite-session-index.ts`), the others fold. Per stream, one row per `entry.appended` (entry id, version, parent seq, run start, kind,
 * role), written in the append's transaction; `ensure` catches up a stream an older writer left behind, and a stream with `unusual` entries is
 * folded. A session head (the folded state at one version, without entries) and context chunks (`context-chunks.ts`) sit beside it: derived
 * data, never the truth. Synchronous; deleting a stream deletes its rows, head and chunks in the same transaction.
 */
import type { SessionEntry } from "../../core/entries.ts";
import type { StoredEvent } from "../event-log.ts";

/** One indexed entry: append position, identity and links (no content). */
export interface IndexedEntry {
  /** Append position among the stream's entries, from 0. */
  seq: number;
  id: string;
  /** The stream version of its `entry.appended`. */
  version: number;
  /** The parent's `seq`, or null for a root. */
  parentSeq: number | null;
  /** The `seq` where the linear run ending here starts (`seq` itself when the parent is not `seq - 1`). */
  runStart: number;
  /** The entry type. */
  kind: string;
  /** A message entry's role, else null. */
  role: string | null;
}

/** How far the index of one stream reaches. */
export interface SessionIndexStatus {
  /** The stream version the rows cover. */
  indexedVersion: number;
  /** The stream's version now. */
  streamVersion: number;
  /** Entries indexed. */
  entries: number;
  /** Entries the runs cannot describe (see the module contract). */
  unusual: number;
  /** Entries of a type Arbor does not know (they get `unknown_entry` diagnostics). */
  unknown: number;
}

/** A stored session head: the folded state (JSON text, {@link SessionHeadState}) at `version`. */
export interface StoredSessionHead {
  version: number;
  state: string;
}

/** The text of one stored context chunk (`context-chunks.ts` gives the format and reads it). */
export interface ContextChunkText {
  /** One character per seq of the chunk: `-` contributes no message, `m` a message item, `e` an entry item. */
  kinds: string;
  /** JSON array of the ids of the entries with an item, in seq order. */
  ids: string;
  /** JSON array of the items, in seq order: the message (`m`) or the whole entry (`e`). */
  items: string;
}

/**
 * A stored context chunk of one stream: the seqs `from…to` it covers, and its text read on demand (one point read; undefined when it is gone), so
 * that a long context holds one chunk's text at a time.
 */
export interface StoredContextChunk {
  /** First seq covered. */
  from: number;
  /** Last seq covered (inclusive). */
  to: number;
  /** Reads the chunk's text. Synchronous; call it before the log is closed. */
  text(): ContextChunkText | undefined;
}

/** The session index of a log (see the module contract). Synchronous. */
export interface SessionIndex {
  /**
   * The index status of `streamId`, catching up a stream that is behind when the log is writable. Undefined when the stream does not exist or is not
   * covered (read-only and behind).
   */
  ensure(streamId: string): SessionIndexStatus | undefined;
  /** The row of entry `id`. */
  byId(streamId: string, id: string): IndexedEntry | undefined;
  /** The row at append position `seq`. */
  at(streamId: string, seq: number): IndexedEntry | undefined;
  /** The last row in `from…to` (seqs, inclusive) of one of `kinds` (and `role`, if given). */
  lastOf(streamId: string, kinds: readonly string[], from: number, to: number, role?: string): IndexedEntry | undefined;
  /** Rows in `from…to` in append order: of `kinds`, or of unknown types (`"unknown"`), or all. */
  inRange(streamId: string, from: number, to: number, kinds?: readonly string[] | "unknown"): IndexedEntry[];
  /** Rows whose entry names `parentId` as its parent, in append order. */
  children(streamId: string, parentId: string): IndexedEntry[];
  /** The full entries of `rows`, in the same order (one read per contiguous stretch). */
  entries(streamId: string, rows: readonly IndexedEntry[]): SessionEntry[];
  /** The stream's events from `fromVersion` (inclusive) on. */
  readStream(streamId: string, fromVersion: number): StoredEvent[];
  head(streamId: string): StoredSessionHead | undefined;
  /** Stores a head (a no-op on a read-only log). A head older than the stored one is ignored. */
  writeHead(streamId: string, version: number, state: string): void;
  /**
   * The stored context chunks that cover any seq of `from…to`, in seq order, never overlapping (`context-chunks.ts`). Absent when the log keeps none
   * (a read-only file written before them); seqs no chunk covers are read from the entries.
   */
  contextChunks?(streamId: string, from: number, to: number): StoredContextChunk[];
}

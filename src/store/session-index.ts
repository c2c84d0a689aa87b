/**
 * The session index (ours): what a log can keep beside the events so that opening a
 * session costs O(its context), not O(the session). The SQLite log keeps it
 * (`sqlite-session-index.ts`); other logs do not, and sessions on them are folded as before.
 *
 * Contract:
 * - per session stream, one row per `entry.appended` in append order (`seq` from 0): the entry
 *   id, the event's version, the parent's `seq`, the `seq` where the entry's run starts (a run
 *   is a chain where each entry's parent is the previous entry: a linear stretch of the tree),
 *   the entry type (`kind`) and a message's role. The writer keeps it in the append's own
 *   transaction, so it is never ahead of or behind the events it indexes;
 * - `status().indexedVersion` is the stream version the rows cover. A stream written by an
 *   earlier Arbor (or by one whose writer did not index) is behind: `ensure` catches it up on a
 *   writable log and reports it as not covered on a read-only one (callers then fold the stream);
 * - `unusual` counts entries the runs cannot describe: a missing or later parent, a parent that
 *   is the entry itself, a reused id. A stream with any is opened by folding (`session-view.ts`);
 * - a session head is the folded state at one version (info, leaf, name, counts, labels, stats,
 *   activity; no entries), written by the repository beside the log after appends; opening
 *   restores it and folds only the events after it;
 * - the writer may also keep the stream's context as text (`context-chunks.ts`): chunks of the
 *   messages the entries of an aligned seq range contribute, written in the append's transaction;
 *   derived data, never the truth: a seq no chunk covers is read from the entries;
 * - everything is synchronous (entries are read inside the view's synchronous accessors);
 *   deleting a stream deletes its rows, head and chunks in the same transaction.
 *
 * @example
 * ```ts
 * const index = log.sessionIndex;
 * const status = index?.ensure(sessionStreamId(id));
 * if (status && status.unusual === 0) console.log(index!.head(sessionStreamId(id))?.version);
 * ```
 */
import type { SessionEntry } from "../core/entries.ts";
import type { StoredEvent } from "./event-log.ts";

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
 * A stored context chunk of one stream: the seqs `from…to` it covers, and its text read on
 * demand (one point read; undefined when it is gone), so that a long context holds one chunk's
 * text at a time.
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
   * The index status of `streamId`, catching up a stream that is behind when the log is
   * writable. Undefined when the stream does not exist or is not covered (read-only and behind).
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
   * The stored context chunks that cover any seq of `from…to`, in seq order, never overlapping
   * (`context-chunks.ts`). Absent when the log keeps none (a read-only file written before them);
   * seqs no chunk covers are read from the entries.
   */
  contextChunks?(streamId: string, from: number, to: number): StoredContextChunk[];
}

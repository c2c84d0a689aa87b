/**
 * The event log contract, which every log passes through one shared contract suite (SQLite, the default; in-memory; PostgreSQL). Guarantees (ours;
 * after Emmett and KurrentDB): per-stream `version` from 1, contiguous as appended (only `endedMessageDeltas: "delete"` leaves gaps, strictly inside
 * a message's span, `delta-retention.ts`); `globalPosition` strictly increasing in commit order; atomic appends, group-committed per tick with
 * their own expected-version checks and outcomes; a re-appended eventId with the same payload is a no-op returning the original positions, with
 * another payload `EventIdReusedError`; every event validated against its zod schema before anything is written.
 */
import type { Observable } from "rxjs";
import type { SessionIndex } from "./session/session-index.ts";
import type { StreamOwnership } from "./log/stream-ownership.ts";
import type { SessionSummaryIndex } from "./session/session-summary-index.ts";
import type { WorkspaceBlobStore } from "./workspace/blob-store.ts";
import type { MemoryIndex } from "./memory/memory-index.ts";
import type { LogEncryption } from "./crypto/log-cipher.ts";

/** Correlation metadata carried by every event. All fields optional. */
export interface EventMetadata {
  sessionId?: string;
  runId?: string;
  turnId?: string;
  /** The eventId (or command id) that caused this event. */
  causationId?: string;
  [key: string]: unknown;
}

/** An event to append. `eventId` (UUIDv7) and `schemaVersion` are filled in when absent. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  eventId?: string;
  type: Type;
  data: Data;
  schemaVersion?: number;
  metadata?: EventMetadata;
  /** ISO 8601; defaults to the commit time. */
  time?: string;
}

/** An event as stored in the log. */
export interface StoredEvent<Type extends string = string, Data = unknown> {
  eventId: string;
  streamId: string;
  /** Position in the stream, from 1, contiguous as appended (see the contract for deleted deltas). */
  version: number;
  /** Position across the log, strictly increasing in commit order. */
  globalPosition: number;
  /** Dot-namespaced noun.verb, e.g. `run.started`. */
  type: Type;
  schemaVersion: number;
  /** ISO 8601 time of the append. */
  time: string;
  data: Data;
  metadata: EventMetadata;
}

/**
 * A stored event read without its data key (`log.encryption.readClear`, `docs/privacy.md`): sealed data holds only its clear fields
 * (`session.created.tenant`, the `messageId` of message events), data stored in clear is as stored (not upcast); the rest is as in
 * {@link StoredEvent}.
 */
export interface ClearEvent extends Omit<StoredEvent, "data"> {
  data: Record<string, unknown>;
  /** True when the data was sealed (then `data` holds only its clear fields). */
  sealed: boolean;
}

/**
 * What the writer expects the stream's version to be: `"any"` (no check), `"no_stream"` (must not exist), `"stream_exists"` (must exist), or an exact
 * version number (0 means no stream).
 */
export type ExpectedVersion = "any" | "no_stream" | "stream_exists" | number;

/** Options of {@link EventLog.append}. */
export interface AppendOptions {
  /** Default `"any"`. */
  expectedVersion?: ExpectedVersion;
}

/** The outcome of an append. For an idempotent retry these are the original positions. */
export interface AppendResult {
  streamId: string;
  /** The stream's version after the append (the next expectedVersion). */
  nextExpectedVersion: number;
  /** The stored events, in order. */
  events: StoredEvent[];
  /** The last event's global position. */
  lastGlobalPosition: number;
  /** True if every event was already in the log (an idempotent retry). */
  duplicate: boolean;
}

/** Options of {@link EventLog.readStream}. */
export interface ReadStreamOptions {
  /** First version to read, inclusive (default 1, or the last version when backwards). */
  fromVersion?: number;
  /** Maximum events to return (default: all). */
  limit?: number;
  /** Default `"forwards"`. */
  direction?: "forwards" | "backwards";
}

/** Options of {@link EventLog.readAll}. */
export interface ReadAllOptions {
  /** Read events with globalPosition strictly greater than this (default 0 = from the start). */
  fromPosition?: number;
  limit?: number;
  /** Only these types. */
  types?: readonly string[];
  /** Only the streams of this tenant (logs with {@link EventLog.tenantIndex}; the others throw InvalidArgumentError). */
  tenant?: string;
}

/** Options of {@link EventLog.listStreams}. */
export interface ListStreamsOptions {
  /** Only the streams of this tenant (logs with {@link EventLog.tenantIndex}; the others throw InvalidArgumentError). */
  tenant?: string;
}

/** Options of {@link EventLog.subscribe}. */
export interface SubscribeOptions {
  /** Deliver events with globalPosition strictly greater than this (default 0). */
  fromPosition?: number;
  /** With `streamId`: deliver events with version strictly greater than this. */
  fromVersion?: number;
  streamId?: string;
  types?: readonly string[];
  /** Only the streams of this tenant (logs with {@link EventLog.tenantIndex}; the others throw InvalidArgumentError). */
  tenant?: string;
}

/** Summary of a stream. */
export interface StreamInfo {
  streamId: string;
  version: number;
  /** ISO 8601 time of the first and last events. */
  createdAt: string;
  updatedAt: string;
  /**
   * The stream's tenant as stored in clear (`data.tenant` of a first `session.created`/`session.deleted`, else `default`), read without opening
   * sealed data; absent where unknown (in-memory logs, a damaged first event). Trusted for filtering only: an altered one fails the data's opening.
   */
  tenant?: string;
}

/** The append-only event log. */
export interface EventLog {
  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  /** The stream's version, 0 if it does not exist. */
  streamVersion(streamId: string): Promise<number>;
  listStreams(options?: ListStreamsOptions): Promise<StreamInfo[]>;
  /** Physically removes a stream's events. Returns the number of events removed. */
  deleteStream(streamId: string): Promise<number>;
  /**
   * Catch-up then live: replays matching events from the log, then tails new appends, with no gap and no duplicate at the switch. Appends by other
   * processes on the same SQLite file are seen by polling (see the implementation's documented tail latency).
   */
  subscribe(options?: SubscribeOptions): Observable<StoredEvent>;
  /** The highest global position in the log, 0 when empty. */
  headPosition(): Promise<number>;
  close(): Promise<void>;
  /**
   * One writer per stream across processes, for logs that many processes share (PostgreSQL; SQLite for the processes of one host); absent on
   * in-memory logs. See `stream-ownership.ts`.
   */
  readonly ownership?: StreamOwnership;
  /**
   * True when the log stores each stream's tenant in an indexed column (PostgreSQL, as Emmett's partitions): `listStreams`, `readAll` and `subscribe`
   * then accept a `tenant` filter. A stream's tenant is `data.tenant` of its first event when that is `session.created` or `session.deleted`, else
   * `default`. Absent on SQLite and in-memory logs.
   */
  readonly tenantIndex?: boolean;
  /**
   * The session index (ours; `session-index.ts`): entry rows and session heads kept beside the events, so a session opens in O(its context). Present
   * on SQLite logs (absent on a read-only file written before it existed); absent on PostgreSQL and in-memory logs.
   */
  readonly sessionIndex?: SessionIndex;
  /**
   * Per-session summary rows kept by the writer in the same transaction as the events (`session-summary-index.ts`): the session list reads them
   * instead of folding every event. Absent on logs that keep none (in-memory; a SQLite file of schema 1 opened read-only).
   */
  readonly sessionSummaries?: SessionSummaryIndex;
  /**
   * The workspace blob store in the log's own database (`workspace/blob-store.ts`): file contents of workspace checkpoints, per tenant. Present on
   * the SQLite, PostgreSQL and in-memory logs.
   */
  readonly workspaceBlobs?: WorkspaceBlobStore;
  /**
   * The session-memory projection in the log's own database (`memory/memory-index.ts`): the current value of each memory key, with full-text search.
   * Present on the SQLite, PostgreSQL and in-memory logs.
   */
  readonly memoryIndex?: MemoryIndex;
  /**
   * Present when the log was opened with `encryption` (`crypto/log-cipher.ts`, `docs/privacy.md`): the master key's id and `rotate()`, which re-wraps
   * every session's data key with it.
   */
  readonly encryption?: LogEncryption;
}

/**
 * The stream-ownership port (ours): one writer per stream across processes and
 * hosts, for logs that many processes share. A log that offers it sets
 * `EventLog.ownership`; the SQLite and in-memory logs do not (their run
 * ownership is the `metadata.owner` pid check of `run-lease.ts`).
 *
 * Contract:
 * - `acquire(streamId)` makes THIS log the stream's one owner until `release()`,
 *   the log's `close()`, or the owner's death (process killed, connection lost:
 *   the ownership goes with its connection). It throws `SessionBusyError` while
 *   another owner is alive, or when this log already owns the stream;
 * - every acquisition increments the stream's fencing token; the owning log sends
 *   its token with each append to the stream, and an append whose token is no
 *   longer the stream's (another process took over) is refused with
 *   `SessionBusyError`, writing nothing: a fenced-out writer never interleaves;
 * - `isOwnedElsewhere(streamId)` is true while a live owner other than this log
 *   holds the stream (crash recovery must then leave its run alone).
 *
 * @example
 * ```ts
 * const lease = await log.ownership!.acquire("session-abc");
 * try { await log.append("session-abc", events); } finally { await lease.release(); }
 * ```
 */

/** This log's ownership of one stream. */
export interface StreamLease {
  readonly streamId: string;
  /** The fencing token of this acquisition (increasing per stream). */
  readonly token: number;
  /** Gives the stream up (idempotent). */
  release(): Promise<void>;
}

/** One writer per stream across processes (see the module contract). */
export interface StreamOwnership {
  /** Takes the stream; throws `SessionBusyError` while another live owner holds it. `owner` is recorded for error messages. */
  acquire(streamId: string, owner?: Record<string, unknown>): Promise<StreamLease>;
  /** True while a live owner other than this log holds the stream. */
  isOwnedElsewhere(streamId: string): Promise<boolean>;
  /** The fencing token this log holds for the stream, if it owns it. */
  tokenOf(streamId: string): number | undefined;
}

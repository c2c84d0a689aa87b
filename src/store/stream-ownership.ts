/**
 * The stream-ownership port (ours): one writer per stream across processes and
 * hosts, for logs that many processes share. A log that offers it sets
 * `EventLog.ownership`: PostgreSQL (advisory locks, any host); the SQLite and in-memory logs
 * do not (their run ownership is the `metadata.owner` pid check of `run-lease.ts`).
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
 * - a lease has a TTL (`ttlMs`, default {@link DEFAULT_LEASE_TTL_MS}): `renew()` (the owner's
 *   heartbeat) extends it; once it has not been renewed for `ttlMs`, another process may take
 *   the stream over even if the owner still lives (paused, partitioned), and the old owner's
 *   `renew()` rejects with `LeaseLostError`;
 * - `isOwnedElsewhere(streamId)` is true while a live owner other than this log
 *   holds the stream with a lease that has not expired (crash recovery must then leave its
 *   run alone).
 *
 * @example
 * ```ts
 * const lease = await log.ownership!.acquire("session-abc");
 * try { await log.append("session-abc", events); } finally { await lease.release(); }
 * ```
 */

/**
 * The default TTL of a stream lease, in ms: another process can take a run over at most this
 * long after its owner stopped renewing (`docs/durability.md`, "Leases and fencing").
 *
 * @example
 * ```ts
 * const lease = await log.ownership!.acquire("session-abc", {}, { ttlMs: DEFAULT_LEASE_TTL_MS });
 * ```
 */
export const DEFAULT_LEASE_TTL_MS = 10_000;

/** Options of {@link StreamOwnership.acquire}. */
export interface LeaseOptions {
  /** How long the lease holds without a renewal, in ms (default {@link DEFAULT_LEASE_TTL_MS}). */
  ttlMs?: number;
}

/** This log's ownership of one stream. */
export interface StreamLease {
  readonly streamId: string;
  /** The fencing token of this acquisition (increasing per stream). */
  readonly token: number;
  /** The lease's TTL, in ms. */
  readonly ttlMs: number;
  /**
   * Extends the lease by its TTL from now (the owner's heartbeat). Rejects with
   * `LeaseLostError` when the stream is no longer this lease's (taken over, released).
   */
  renew(): Promise<void>;
  /** Gives the stream up (idempotent). */
  release(): Promise<void>;
}

/** One writer per stream across processes (see the module contract). */
export interface StreamOwnership {
  /** Takes the stream; throws `SessionBusyError` while another live owner holds it. `owner` is recorded for error messages. */
  acquire(streamId: string, owner?: Record<string, unknown>, options?: LeaseOptions): Promise<StreamLease>;
  /** True while a live owner other than this log holds the stream. */
  isOwnedElsewhere(streamId: string): Promise<boolean>;
  /** The fencing token this log holds for the stream, if it owns it. */
  tokenOf(streamId: string): number | undefined;
  /**
   * True when the log checks the token of every append (PostgreSQL): an owner may then catch its
   * view up after acquiring. False when the version check of each append is the fence (SQLite):
   * a stale view stays stale, and its first append is refused.
   */
  readonly fencesAppends: boolean;
}

/**
 * The stream-ownership port (ours): one writer per stream across the processes that share a log, set as `EventLog.ownership` by PostgreSQL
 * (an owner row naming its owner's live connection, plus advisory locks; any host) and SQLite (an owner row, one host); the in-memory log has none.
 * - `acquire(streamId)` makes this log the one owner until `release()`, `close()` or its death; another live owner, or this log owning it already,
 *   is `SessionBusyError`;
 * - each acquisition increments the stream's fencing token, sent with every append: a fenced-out writer's append is `SessionBusyError` and writes
 *   nothing;
 * - a lease not renewed for `ttlMs` (default {@link DEFAULT_LEASE_TTL_MS}) may be taken over, and the old owner's `renew()` rejects with
 *   `LeaseLostError`; `isOwnedElsewhere` is true while another live owner holds an unexpired lease.
 *
 * @example
 * ```ts
 * const lease = await log.ownership!.acquire("session-abc");
 * try { await log.append("session-abc", events); } finally { await lease.release(); }
 * ```
 */

/**
 * The default TTL of a stream lease, in ms: another process can take a run over at most this long after its owner stopped renewing
 * (`docs/durability.md`, "Leases and fencing").
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
   * `Date.now()` (ms) when the statement that took or last extended the lease was sent (not when it was queued): it holds at least until
   * `renewedAt + ttlMs` unless taken over. Optional: without it a caller counts from its call of `acquire()` or `renew()`.
   */
  readonly renewedAt?: number;
  /**
   * Extends the lease by its TTL from now (the owner's heartbeat). Rejects with `LeaseLostError` when the stream is no longer this lease's (taken
   * over, released).
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
   * True when an owner catches its view up after acquiring (PostgreSQL). False (SQLite): a stale view stays stale, and its first append is refused by
   * the version check. Both logs check the owner's token in every append to a stream it holds.
   */
  readonly fencesAppends: boolean;
}

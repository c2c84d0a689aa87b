/**
 * A run's ownership of its session across processes (ours): a lease with a TTL and a heartbeat,
 * through the session's ownership port (`SessionHandle.ownership`: PostgreSQL advisory locks).
 * Without the port (SQLite, the in-memory log) the calls do nothing
 * and run ownership stays the `metadata.owner` pid check of `run-lease.ts`.
 *
 * Contract:
 * - `take()` before a run: acquires the session's lease with `ttlMs` (throws `SessionBusyError`
 *   while another live process holds an unexpired one), then, where the log fences appends by
 *   token (PostgreSQL), catches the view up with what other processes appended since it was read
 *   (`refresh()`), so the run's appends are checked against the current version. Taking a session this agent already holds does nothing;
 * - while held, a heartbeat renews the lease every third of its TTL; the lease is LOST when a
 *   renewal is refused (another process took the run over) or when no renewal succeeded for a
 *   whole TTL (this process was paused, or cut off from the database): then `onLost` is called
 *   once with a `LeaseLostError`, and `fence()` returns that error from then on (the session
 *   writer refuses every later append with it, `session-writer.ts`). `fence()` also reports the
 *   loss by itself when the last renewal is older than the TTL, before the timer fires;
 * - `release()` after the run settles (idempotent); it stops the heartbeat.
 *
 * @example
 * ```ts
 * const ownership = createRunOwnership(session, { ttlMs: 10_000, onLost: (error) => abortRun(error) });
 * await ownership.take();
 * try { await run(); } finally { await ownership.release(); }
 * ```
 */
import { LeaseLostError } from "../core/errors.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { DEFAULT_LEASE_TTL_MS, type StreamLease } from "../store/stream-ownership.ts";
import { currentRunOwner } from "./run-lease.ts";

/** Take and release of one agent's session ownership (see the module contract). */
export interface RunOwnership {
  take(): Promise<void>;
  release(): Promise<void>;
  /** The `LeaseLostError` once the lease is lost while held, else undefined. */
  fence(): InstanceType<typeof LeaseLostError> | undefined;
}

/** Options of {@link createRunOwnership}. */
export interface RunOwnershipOptions {
  /** The lease's TTL in ms (default `DEFAULT_LEASE_TTL_MS`, 10 s). */
  ttlMs?: number;
  /** Called once when the lease is lost while held. */
  onLost?: (error: InstanceType<typeof LeaseLostError>) => void;
}

/**
 * Creates the run ownership of `session` (see the module contract).
 *
 * @example
 * ```ts
 * const ownership = createRunOwnership(session);
 * ```
 */
export function createRunOwnership(session: SessionHandle, options: RunOwnershipOptions = {}): RunOwnership {
  const ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  // The lease held now and its heartbeat: this module's own state (one lease per run), never the run's.
  let held: { lease: StreamLease; renewedAt: number; timer: NodeJS.Timeout; lost?: InstanceType<typeof LeaseLostError> } | undefined;

  const lose = (error: InstanceType<typeof LeaseLostError>) => {
    if (!held || held.lost) return;
    held.lost = error;
    clearInterval(held.timer);
    options.onLost?.(error);
  };
  const expired = () =>
    new LeaseLostError(`The lease of session ${session.id} expired: it was not renewed for ${ttlMs} ms (the process was paused or cut off from the log); another process may have taken its run over.`, {
      details: { sessionId: session.id, ttlMs },
    });
  const beat = () => {
    const current = held;
    if (!current || current.lost) return;
    if (Date.now() - current.renewedAt > ttlMs) {
      lose(expired());
      return;
    }
    // The lease runs from when the renewal was sent (the log's clock starts it no earlier).
    const sentAt = Date.now();
    current.lease.renew().then(
      () => {
        if (held === current && !current.lost) current.renewedAt = sentAt;
      },
      (error: unknown) => {
        if (held !== current) return;
        if (LeaseLostError.isInstance(error)) lose(error);
        // Any other failure (a busy file, a dropped connection) is retried at the next beat; a whole TTL of them loses the lease.
        else if (Date.now() - current.renewedAt > ttlMs) lose(expired());
      },
    );
  };

  return {
    async take() {
      if (!session.ownership || held) return;
      const sentAt = Date.now();
      const lease = await session.ownership.acquire({ ...currentRunOwner() }, { ttlMs });
      const timer = setInterval(beat, Math.max(50, Math.floor(ttlMs / 3)));
      timer.unref();
      held = { lease, renewedAt: sentAt, timer };
      // With token-checked appends (PostgreSQL) the owner catches up with what others wrote; where
      // the version check is the fence (SQLite), a stale view stays stale and its append is refused.
      const refresh = (session as { refresh?: () => Promise<number> }).refresh;
      if (refresh && session.ownership.fencesAppends) await refresh.call(session);
    },
    async release() {
      const current = held;
      held = undefined;
      if (!current) return;
      clearInterval(current.timer);
      await current.lease.release();
    },
    fence() {
      if (!held) return undefined;
      if (!held.lost && Date.now() - held.renewedAt > ttlMs) lose(expired());
      return held.lost;
    },
  };
}

/**
 * A run's ownership of its session across processes: a lease with a TTL and a heartbeat through `SessionHandle.ownership` (no-op without it).
 * `take()` acquires it (`SessionBusyError` while another live process holds it) and catches the view up; the lease is LOST when a renewal is
 * refused or none succeeded for a whole TTL, then `onLost` is called once and `fence()` returns `LeaseLostError`; `release()` is idempotent.
 */
import { LeaseLostError, SessionBusyError } from "../core/errors.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { DEFAULT_LEASE_TTL_MS, type StreamLease } from "../store/log/stream-ownership.ts";
import { currentRunOwner } from "./run-lease.ts";

/** Take and release of one agent's session ownership (see the module contract). */
export interface RunOwnership {
  take(): Promise<void>;
  release(): Promise<void>;
  /** The `LeaseLostError` once the lease is lost while held, else undefined. */
  fence(): InstanceType<typeof LeaseLostError> | undefined;
}

/** The refusal of `take()` in the session's terms: which process runs it (its owner), and what to do. */
function busyError(sessionId: string, cause: InstanceType<typeof SessionBusyError>): InstanceType<typeof SessionBusyError> {
  const owner = ((cause.details as { owner?: unknown } | undefined)?.owner ?? {}) as { pid?: unknown; host?: unknown };
  const where = typeof owner.pid === "number" ? `process ${owner.pid} on ${String(owner.host)}` : "another run of this process";
  return new SessionBusyError(
    `Session ${sessionId} has a run in progress in ${where}; wait for it to finish (or for its lease to expire once that process stops renewing it) or stop that process, then retry.`,
    { details: { ...(cause.details as Record<string, unknown> | undefined), sessionId }, cause },
  );
}

/** Options of {@link createRunOwnership}. */
export interface RunOwnershipOptions {
  /** The lease's TTL in ms (default `DEFAULT_LEASE_TTL_MS`, 10 s). */
  ttlMs?: number;
  /** Called once when the lease is lost while held. */
  onLost?: (error: InstanceType<typeof LeaseLostError>) => void;
}

/** Creates the run ownership of `session` (see the module contract). */
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
        if (held === current && !current.lost) current.renewedAt = current.lease.renewedAt ?? sentAt;
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
      const lease = await session.ownership.acquire({ ...currentRunOwner() }, { ttlMs }).catch((error: unknown) => {
        throw SessionBusyError.isInstance(error) ? busyError(session.id, error) : error;
      });
      const timer = setInterval(beat, Math.max(50, Math.floor(ttlMs / 3)));
      timer.unref();
      // Timed from when the taking statement was sent: time queued behind this process's other lock calls is not the lease's.
      held = { lease, renewedAt: lease.renewedAt ?? sentAt, timer };
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

/**
 * A run's ownership of its session across processes (ours), through the
 * session's ownership port (`SessionHandle.ownership`, offered by the PostgreSQL
 * log). Without the port both calls do nothing and run ownership stays the
 * `metadata.owner` pid check of `run-lease.ts`.
 *
 * Contract:
 * - `take()` before a run: acquires the session (throws `SessionBusyError` while
 *   another live process holds it), then catches the view up with what other
 *   processes appended since it was read (`refresh()`), so the run's appends are
 *   checked against the current version. Taking a session this agent already
 *   holds does nothing;
 * - `release()` after the run settles (idempotent). While held, every append of
 *   this log to the session carries the fencing token; after a takeover they are
 *   refused with `SessionBusyError` and the run fails without writing.
 *
 * @example
 * ```ts
 * const ownership = createRunOwnership(session);
 * await ownership.take();
 * try { await run(); } finally { await ownership.release(); }
 * ```
 */
import type { StreamLease } from "../store/stream-ownership.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { currentRunOwner } from "./run-lease.ts";

/** Take and release of one agent's session ownership (see the module contract). */
export interface RunOwnership {
  take(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Creates the run ownership of `session` (see the module contract).
 *
 * @example
 * ```ts
 * const ownership = createRunOwnership(session);
 * ```
 */
export function createRunOwnership(session: SessionHandle): RunOwnership {
  let lease: StreamLease | undefined;
  return {
    async take() {
      if (!session.ownership || lease) return;
      lease = await session.ownership.acquire({ ...currentRunOwner() });
      const refresh = (session as { refresh?: () => Promise<number> }).refresh;
      if (refresh) await refresh.call(session);
    },
    async release() {
      const held = lease;
      lease = undefined;
      await held?.release();
    },
  };
}

/**
 * Which sessions are compacting or summarizing a branch right now (per process).
 *
 * Contract (ours; the fix for pi #9178, a summary attached to the wrong branch):
 * - at most one compaction or branch summary runs per session id at a time;
 *   {@link acquireSessionLock} throws `InvalidStateError` for a second one;
 * - while a session holds the lock, `moveTo` (and any caller that checks
 *   {@link isCompacting}) refuses to move the leaf;
 * - {@link abortCompaction} aborts the running work (the actor ends `cancelled`
 *   and nothing is appended, unless it is already appending).
 *
 * @example
 * ```ts
 * if (isCompacting(session.id)) throw new InvalidStateError("wait for the compaction");
 * ```
 */
import { InvalidStateError } from "../core/errors.ts";

/**
 * What holds the lock.
 *
 * @example
 * ```ts
 * const kind: SessionLockKind | undefined = sessionLockHolder(session.id);
 * ```
 */
export type SessionLockKind = "compaction" | "branch-summary";

interface Holder {
  kind: SessionLockKind;
  abort: (reason?: string) => void;
}

const holders = new Map<string, Holder>();

/**
 * True while a compaction (not a branch summary) runs on the session.
 *
 * @example
 * ```ts
 * if (isCompacting(session.id)) console.log("compacting…");
 * ```
 */
export function isCompacting(sessionId: string): boolean {
  return holders.get(sessionId)?.kind === "compaction";
}

/**
 * What holds the session's lock, if anything.
 *
 * @example
 * ```ts
 * sessionLockHolder(session.id); // "compaction" | "branch-summary" | undefined
 * ```
 */
export function sessionLockHolder(sessionId: string): SessionLockKind | undefined {
  return holders.get(sessionId)?.kind;
}

/**
 * Takes the session's lock; returns the release function (idempotent).
 * Throws `InvalidStateError` if a compaction or branch summary already runs.
 *
 * @example
 * ```ts
 * const release = acquireSessionLock(session.id, "compaction", () => controller.abort());
 * try { ... } finally { release(); }
 * ```
 */
export function acquireSessionLock(sessionId: string, kind: SessionLockKind, abort: (reason?: string) => void): () => void {
  const current = holders.get(sessionId);
  if (current) {
    throw new InvalidStateError(
      `Session ${sessionId} is busy with a ${current.kind === "compaction" ? "compaction" : "branch summary"}; wait for it to finish or abort it first.`,
      { details: { sessionId, busyWith: current.kind } },
    );
  }
  const holder: Holder = { kind, abort };
  holders.set(sessionId, holder);
  return () => {
    if (holders.get(sessionId) === holder) holders.delete(sessionId);
  };
}

/**
 * Aborts the compaction or branch summary running on the session. Returns false if none runs.
 *
 * @example
 * ```ts
 * abortCompaction(session.id); // true if something was running
 * ```
 */
export function abortCompaction(sessionId: string, reason = "aborted"): boolean {
  const holder = holders.get(sessionId);
  if (!holder) return false;
  holder.abort(reason);
  return true;
}

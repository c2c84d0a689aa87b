/**
 * The sessions the HTTP service keeps open: opened through the harness on first use, closed
 * again after they were idle for a while, reopened transparently from the log on the next use.
 *
 * Contract (ours):
 * - {@link SessionPool.open} returns the live session (the harness's `openSession`: one per id);
 *   the harness itself may be created lazily by `openHarness(id)` on the first open (with that
 *   session as its own), so a service never creates an empty session at start;
 * - every open marks the session used; a session unused for `idleMs` (default 600 000 ms; `0`
 *   keeps sessions open) whose slot is idle (no run, compaction or navigation, not waiting for
 *   approvals) and whose queues are empty is disposed (writes flushed) and forgotten; the next
 *   open reopens it from the log (crash recovery included);
 * - the harness's own session (disposing it closes the harness): when the pool made the harness
 *   (`openHarness`), that session is closed like the others once it is idle for `idleMs` AND it
 *   is the last one open, by closing the harness; the next open makes a new harness with
 *   `openHarness` (waiting for the old one to finish closing), whose own session is then the one
 *   that open asked for. A harness given as `harness` is the caller's: its own session is never
 *   closed;
 * - the sweep runs every `idleMs / 4` (10 ms to 60 s) on an unref'd timer; a failing dispose is
 *   ignored (the harness may be closed); `onClosed(id)` is called after each close.
 *
 * @example
 * ```ts
 * const pool = createSessionPool({ harness, idleMs: 60_000 });
 * const session = await pool.open("chat-1");
 * ```
 */
import type { AgentHarness } from "../harness/create-harness.ts";
import type { HarnessSession } from "../harness/harness-session-types.ts";
import { SessionBusyError } from "../core/errors.ts";

/** The live sessions of a service (see the module contract). */
export interface SessionPool {
  /** The harness, created on first need; undefined for a read-only service. */
  harness(sessionId: string): Promise<AgentHarness | undefined>;
  /** The live session `id` (opened on first use). */
  open(sessionId: string): Promise<HarnessSession>;
  /**
   * Closes session `id` if this pool holds it open (for a delete): disposed and forgotten, or,
   * when it is the own session of a harness the pool made, that harness closed (every session it
   * holds must be idle then). Throws SessionBusyError when it (or, for the own session, any
   * session) is not idle, or when it is the own session of a harness given as `harness`.
   */
  release(sessionId: string): Promise<void>;
}

/** Options of {@link createSessionPool}. */
export interface SessionPoolOptions {
  harness?: AgentHarness;
  openHarness?: (sessionId: string) => Promise<AgentHarness>;
  idleMs?: number;
  onClosed?: (sessionId: string) => void;
}

/**
 * Creates the pool (see the module contract).
 *
 * @example
 * ```ts
 * const pool = createSessionPool({ openHarness: (id) => createHarness({ repository, sessionId: id, models }) });
 * ```
 */
export function createSessionPool(options: SessionPoolOptions): SessionPool {
  const idleMs = options.idleMs ?? 600_000;
  let harness: Promise<AgentHarness> | undefined = options.harness ? Promise.resolve(options.harness) : undefined;
  /** The harness the pool made, and the close of the one it made before (awaited by the next open). */
  let made: AgentHarness | undefined;
  let closing: Promise<void> = Promise.resolve();
  const used = new Map<string, { session?: HarnessSession; at: number }>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const harnessFor = (sessionId: string): Promise<AgentHarness> | undefined => {
    const open = options.openHarness;
    if (!harness && open) {
      const opening = closing.then(() => open(sessionId));
      harness = opening;
      opening.then(
        (value) => {
          if (harness === opening) made = value;
        },
        () => {
          if (harness === opening) harness = undefined;
        },
      );
    }
    return harness;
  };

  const sweep = async () => {
    const now = Date.now();
    for (const [id, entry] of used) {
      const session = entry.session;
      if (!session || now - entry.at < idleMs) continue;
      if (session.getState().operation !== "idle" || session.hasQueuedMessages()) continue;
      const own = made !== undefined && session === made ? made : undefined;
      // The harness's own session goes last: closing it closes the harness.
      if (own && used.size > 1) continue;
      used.delete(id);
      if (own) {
        harness = undefined;
        made = undefined;
      }
      const closed = (own ? own.close() : session.dispose()).catch(() => undefined); // The harness may be closed already.
      if (own) closing = closed;
      await closed;
      options.onClosed?.(id);
    }
    if (used.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  const track = (id: string, session?: HarnessSession) => {
    const entry = used.get(id);
    used.set(id, { session: session ?? entry?.session, at: Date.now() });
    if (idleMs > 0 && timer === undefined) {
      timer = setInterval(() => void sweep(), Math.min(60_000, Math.max(10, Math.floor(idleMs / 4))));
      timer.unref?.();
    }
  };

  const idle = (session: HarnessSession) => session.getState().operation === "idle" && !session.hasQueuedMessages();

  return {
    async release(sessionId) {
      const live = harness ? await harness.catch(() => undefined) : undefined;
      if (!live) return;
      const busy = () => new SessionBusyError(`Session "${sessionId}" is running or waiting; stop it first.`, { details: { sessionId } });
      if (sessionId === live.id) {
        if (live !== made) throw new SessionBusyError(`Session "${sessionId}" is the service harness's own session; it cannot be closed while the service runs.`, { details: { sessionId } });
        for (const entry of used.values()) if (entry.session && !idle(entry.session)) throw busy();
        const ids = [...used.keys()];
        used.clear();
        harness = undefined;
        made = undefined;
        closing = live.close().catch(() => undefined);
        await closing;
        for (const id of ids) options.onClosed?.(id);
        return;
      }
      const session = used.get(sessionId)?.session;
      if (!session) return;
      if (!idle(session)) throw busy();
      used.delete(sessionId);
      await session.dispose();
      options.onClosed?.(sessionId);
    },
    async harness(sessionId) {
      return harnessFor(sessionId);
    },
    async open(sessionId) {
      const owner = harnessFor(sessionId);
      if (!owner) throw new Error("createSessionPool(): no harness (a read-only service cannot open sessions).");
      const live = await owner;
      if (sessionId === live.id) {
        if (live === made) track(sessionId, live);
        return live;
      }
      // Marked before and after the open, so a sweep in between never closes it.
      track(sessionId);
      try {
        const session = await live.openSession(sessionId);
        track(sessionId, session);
        return session;
      } catch (error) {
        if (!used.get(sessionId)?.session) used.delete(sessionId);
        throw error;
      }
    },
  };
}

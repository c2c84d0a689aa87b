/**
 * The sessions the HTTP service keeps open: opened on first use (the harness itself possibly made lazily), disposed after `idleMs` unused with an
 * idle slot and empty queues, reopened from the log on the next use. A harness the pool made is closed with its last session; one given by the
 * caller keeps its own session. The sweep runs on an unref'd timer.
 */
import type { AgentHarness } from "../harness/create-harness.ts";
import type { HarnessSession } from "../harness/harness-session-types.ts";
import { SessionBusyError } from "../core/errors.ts";
import { ignoreError } from "../core/ignored.ts";

/** The live sessions of a service (see the module contract). */
export interface SessionPool {
  /** The harness, created on first need; undefined for a read-only service. */
  harness(sessionId: string): Promise<AgentHarness | undefined>;
  /** The live session `id` (opened on first use). */
  open(sessionId: string): Promise<HarnessSession>;
  /**
   * Closes session `id` if this pool holds it open (for a delete): disposed and forgotten, or, when it is the own session of a harness the pool made,
   * that harness closed (every session it holds must be idle then). Throws SessionBusyError when it (or, for the own session, any session) is not
   * idle, or when it is the own session of a harness given as `harness`.
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

/** Creates the pool (see the module contract). */
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
      const closed = (own ? own.close() : session.dispose()).catch(ignoreError("closing an idle session whose harness may be closed already"));
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
      const live = harness ? await harness.catch(ignoreError("a harness that failed to open has no session to release")) : undefined;
      if (!live) return;
      const busy = () => new SessionBusyError(`Session "${sessionId}" is running or waiting; stop it first.`, { details: { sessionId } });
      if (sessionId === live.id) {
        if (live !== made) throw new SessionBusyError(`Session "${sessionId}" is the service harness's own session; it cannot be closed while the service runs.`, { details: { sessionId } });
        for (const entry of used.values()) if (entry.session && !idle(entry.session)) throw busy();
        const ids = [...used.keys()];
        used.clear();
        harness = undefined;
        made = undefined;
        closing = live.close().catch(ignoreError("closing the service harness on release, best effort"));
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

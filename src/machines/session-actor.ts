/**
 * The session actor's operation slot, as seen by code that only holds a session handle: at most one session actor per handle in this process (the
 * agent, or a standalone slot that refuses runs and hands over to an agent). One operation at a time; {@link SessionActor.operate} rejects with
 * `SessionBusyError` (`details.busyWith`) when the slot is busy; `abort()` aborts what holds it, and the slot is idle once that settled.
 */
import { createActor, fromPromise, type Actor } from "xstate";
import { InvalidStateError, SessionBusyError } from "../core/errors.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { agentMachine, operationOf, type PrepareRunInput, type PrepareRunOutput } from "./agent.machine.ts";
import type { SessionActor, SessionOperation, SessionWrites, SlotWork } from "./session-slot.ts";
import { createSessionWriter, type SessionWriter } from "./session-writer.ts";

export type { SessionActor, SessionOperation };

const NAMES: Record<SessionOperation, string> = {
  idle: "nothing",
  preparing: "a run that is starting",
  running: "a run",
  compacting: "a compaction",
  navigating: "a navigation (moveTo)",
  "awaiting-approval": "tool calls waiting for approval (approve or deny them, then continue(); or abort())",
};

/** The `SessionBusyError` of an operation refused because `busy` holds the slot. */
export function sessionBusyError(sessionId: string, busy: SessionOperation, what: string): InstanceType<typeof SessionBusyError> {
  return new SessionBusyError(`${what}: session ${sessionId} is busy with ${NAMES[busy]}; wait for it to finish or abort it first.`, {
    details: { sessionId, busyWith: busy },
  });
}

/** The `SessionBusyError` of a run refused because `busy` holds the slot (a run says to steer or follow up instead). */
export function runBusyError(sessionId: string, busy: SessionOperation, what: string): InstanceType<typeof SessionBusyError> {
  return busy === "preparing" || busy === "running"
    ? new SessionBusyError(`${what}: the agent is already running a prompt. Use steer() or followUp() to queue a message, or wait for idle.`, {
        details: { sessionId, busyWith: busy },
      })
    : sessionBusyError(sessionId, busy, what);
}

/** The {@link SessionWrites} of whichever writer `writer()` returns at each call, so each write goes to the current one. */
export function writesOf(writer: () => SessionWriter): SessionWrites {
  return {
    appendEntries: (entries, options) => writer().appendEntries(entries, options),
    appendEvents: (events) => writer().appendEvents(events),
    moveLeaf: (leafId) => writer().moveLeaf(leafId),
    async record(events) {
      const current = writer();
      current.push(...events);
      await current.commit();
    },
  };
}

/** The {@link SessionActor} over a running agent-machine actor. */
export function slotOver(sessionId: string, actor: Actor<typeof agentMachine>, writer: () => SessionWriter): SessionActor {
  return {
    sessionId,
    writes: writesOf(writer),
    operation: () => operationOf(actor.getSnapshot()),
    operate<T>(kind: SlotWork, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
      const busy = operationOf(actor.getSnapshot());
      if (busy !== "idle") return Promise.reject(sessionBusyError(sessionId, busy, kind === "compacting" ? "compact()" : "moveTo()"));
      return new Promise<T>((resolve, reject) => {
        const controller = new AbortController();
        const run = async (signal: AbortSignal) => {
          try {
            resolve(await work(signal));
          } catch (error) {
            reject(error);
          }
        };
        actor.send({ type: "OPERATE", kind, operation: { controller, run } });
      });
    },
    abort: (reason) => actor.send({ type: "ABORT", reason }),
  };
}

const actors = new WeakMap<SessionHandle, SessionActor>();

/** Makes `actor` the session actor of `session` (called by `createAgent`). */
export function registerSessionActor(session: SessionHandle, actor: SessionActor): void {
  actors.set(session, actor);
}

/** The session actor of `session`: its agent's, or a standalone slot created now (refuses runs, holds compactions and navigations). */
export function sessionActorOf(session: SessionHandle): SessionActor {
  const known = actors.get(session);
  if (known) return known;
  const machine = agentMachine.provide({
    actors: {
      prepareRun: fromPromise<PrepareRunOutput, PrepareRunInput>(async () => {
        throw new InvalidStateError(`Session ${session.id} has no agent: create one with createAgent() to run prompts.`);
      }),
    },
  });
  // Its own writer; one refused append fails that write only (the next write starts a fresh writer).
  let writer = createSessionWriter({ session });
  const current = () => (writer.failure === undefined ? writer : (writer = createSessionWriter({ session })));
  const slot = slotOver(session.id, createActor(machine, { input: {} }).start(), current);
  // Once an agent took the session (registerSessionActor), a caller still holding this slot writes through the agent's writer: one writer per session
  // (its writer waits for this one's queued writes first, `session-writer.ts` handover).
  const owner = (): SessionWrites => {
    const registered = actors.get(session);
    return registered && registered !== created ? registered.writes : slot.writes;
  };
  const created: SessionActor = {
    ...slot,
    writes: {
      appendEntries: (entries, options) => owner().appendEntries(entries, options),
      appendEvents: (events) => owner().appendEvents(events),
      moveLeaf: (leafId) => owner().moveLeaf(leafId),
      record: (events) => owner().record(events),
    },
  };
  actors.set(session, created);
  return created;
}

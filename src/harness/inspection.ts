/**
 * `harnessInspection`: the XState inspection observer a harness gives one session's agent, from `createHarness({ inspect })`: an observer, a
 * `createMachineStates()` recorder, or an array of them. With several, each event goes to all in order; one that throws is dropped for that
 * session and reported once through `process.emitWarning`.
 */
import { sessionInspection } from "../machines/machine-states.ts";

type Observer = ((event: unknown) => void) | { next?: (event: unknown) => void };

function deliver(observer: Observer, event: unknown): void {
  if (typeof observer === "function") observer(event);
  else observer.next?.(event);
}

/** The observer of `inspect` (see the module contract) for session `sessionId`, or `undefined` when there is none (`undefined` or an empty array). */
export function harnessInspection(inspect: unknown, sessionId: string): unknown {
  if (!Array.isArray(inspect)) return inspect === undefined ? undefined : sessionInspection(inspect, sessionId);
  const observers = inspect.map((each: unknown) => sessionInspection(each, sessionId) as Observer);
  if (observers.length === 0) return undefined;
  if (observers.length === 1) return observers[0];
  const live = new Set(observers.keys());
  return (event: unknown) => {
    for (const index of live) {
      try {
        deliver(observers[index]!, event);
      } catch (error) {
        live.delete(index);
        process.emitWarning(`inspect[${index}] threw and was dropped for session ${sessionId}: ${error instanceof Error ? error.message : String(error)}`, "ArborInspectionWarning");
      }
    }
  };
}

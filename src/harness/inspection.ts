/**
 * `harnessInspection`: the XState inspection observer a harness gives one session's agent, built
 * from `createHarness({ inspect })`, which takes one observer or several (ours).
 *
 * Contract (ours):
 * - `inspect` is one of: an XState inspection observer (a function, or an object with `next`),
 *   a `createMachineStates()` recorder (its observer for the session is used), or an array of
 *   those; an empty array means no inspection;
 * - a single one is passed on unchanged (as before several were accepted);
 * - with several, each inspection event goes to every observer, in array order, synchronously;
 *   an observer that throws is dropped for that session (not called again) and reported once
 *   through `process.emitWarning`; the others, and the actors, go on. (A single observer that
 *   throws is XState's affair, as before: the operation that caused the event fails.)
 *
 * @example
 * ```ts
 * const harness = await createHarness({ models, inspect: [createArborInspector().inspect, createMachineStates()] });
 * ```
 */
import { sessionInspection } from "../machines/machine-states.ts";

type Observer = ((event: unknown) => void) | { next?: (event: unknown) => void };

function deliver(observer: Observer, event: unknown): void {
  if (typeof observer === "function") observer(event);
  else observer.next?.(event);
}

/**
 * The observer of `inspect` (see the module contract) for session `sessionId`, or `undefined`
 * when there is none (`undefined` or an empty array).
 *
 * @example
 * ```ts
 * createAgent({ session, model, inspect: harnessInspection([inspector.inspect, machines], session.id) });
 * ```
 */
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

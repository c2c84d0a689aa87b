/**
 * The approval paths of the agent machine's slot: `xstate/graph` simple paths over the real {@link agentMachine} (children stubbed), joined with an
 * environment (decisions, a restart, another process resuming) so the paths reach `awaiting-approval` and leave it every way. Events are offered
 * only where the machine takes them and a real harness produces them; {@link slotPaths} keeps paths ending where the slot rests.
 */
import { getSimplePaths } from "xstate/graph";
import { fromPromise, type AnyMachineSnapshot } from "xstate";
import { agentMachine } from "../machines/agent.machine.ts";
import { assertNever } from "../core/exhaustive.ts";

/** The environment around the slot (see the module contract). */
export interface SlotEnvironment {
  prompted: boolean;
  decision: "pending" | "approved" | "denied";
  /** A second decision was made (a repeat of the first, or a conflicting one). */
  redecided: "" | "repeat" | "conflict";
  /** A `continue()` of the undecided call was refused once. */
  refused: boolean;
  restarted: boolean;
  /** Another process approved the call and resumed the run. */
  elsewhere: boolean;
  /** The harness's `APPROVAL.CLEAR` is due (a refusal found nothing waiting). */
  clearDue: boolean;
  /** The gated call has its result (a resume ran here or elsewhere, or the abort closed it). */
  closed: boolean;
  /** The restarted slot took `APPROVAL.AWAIT`. */
  awaited: boolean;
}

/** One event of a slot path. */
export type SlotEvent =
  | { type: "PROMPT" }
  | { type: "CONTINUE" }
  | { type: "ABORT" }
  | { type: "APPROVAL.AWAIT" }
  | { type: "APPROVAL.CLEAR" }
  | { type: "prepare.done" }
  | { type: "prepare.refused" }
  | { type: "run.done" }
  | { type: "kit.approve" }
  | { type: "kit.deny" }
  | { type: "kit.restart" }
  | { type: "kit.elsewhere" };

/** One step: the event and the slot state it leads to (with the run's status for `run.done`). */
export interface SlotStep {
  event: SlotEvent;
  state: string;
  /** `run.done`: how the run ended. */
  runStatus?: "suspended" | "done" | "aborted";
}

/** A slot path: its steps and the environment where it ends. */
export interface SlotPath {
  steps: SlotStep[];
  end: SlotEnvironment;
  description: string;
}

interface WrappedSnapshot {
  slot: AnyMachineSnapshot;
  env: SlotEnvironment;
  status: "active";
  output: undefined;
  error: undefined;
}

const EVENTS: SlotEvent[] = (
  ["PROMPT", "CONTINUE", "ABORT", "APPROVAL.AWAIT", "APPROVAL.CLEAR", "prepare.done", "prepare.refused", "run.done", "kit.approve", "kit.deny", "kit.restart", "kit.elsewhere"] as const
).map((type) => ({ type }));

const slotLogic = agentMachine.provide({
  actors: {
    run: fromPromise(async () => ({})) as never,
    prepareRun: fromPromise(async () => ({})) as never,
  },
});

const START: SlotEnvironment = { prompted: false, decision: "pending", redecided: "", refused: false, restarted: false, elsewhere: false, clearDue: false, closed: false, awaited: false };

const valueOf = (snapshot: AnyMachineSnapshot) => String(snapshot.value);
const requestOf = (snapshot: AnyMachineSnapshot) => snapshot.context.request as { runId: string; kind: string; abort?: object } | undefined;
/** The invoked prepareRun child (its id is xstate's generated one). */
const prepareChild = (snapshot: AnyMachineSnapshot) => Object.keys(snapshot.children).find((id) => id !== "run");

/** What the run in the slot ends with, as the harness decides it (see the module contract). */
function runStatusOf(snapshot: AnyMachineSnapshot): "suspended" | "done" | "aborted" {
  const request = requestOf(snapshot);
  if (request?.kind === "prompt") return "suspended";
  return request?.abort ? "aborted" : "done";
}

/** Whether the preparation in the slot succeeds (else the harness refuses the resume). */
function prepareSucceeds(snapshot: AnyMachineSnapshot, env: SlotEnvironment): boolean {
  const request = requestOf(snapshot);
  if (request?.kind !== "resume") return true;
  if (env.closed) return false;
  return request.abort !== undefined || env.decision !== "pending";
}

function offered(wrapped: WrappedSnapshot, event: SlotEvent): boolean {
  const { slot, env } = wrapped;
  const state = valueOf(slot);
  if (state === "preparing") return event.type === (prepareSucceeds(slot, env) ? "prepare.done" : "prepare.refused");
  if (state === "running") return event.type === "run.done";
  if (state === "idle") {
    // At the start-up after a restart the harness finds the open call in the log.
    if (awaitDue(env)) return event.type === "APPROVAL.AWAIT";
    return event.type === "PROMPT" && !env.prompted;
  }
  if (state !== "awaiting-approval") return false;
  if (env.clearDue) return event.type === "APPROVAL.CLEAR";
  switch (event.type) {
    case "CONTINUE":
      return env.decision !== "pending" || env.closed || !env.refused;
    case "ABORT":
      return true;
    case "kit.approve":
    case "kit.deny":
      // A second decision (a repeat or a conflict) once, before any refusal or restart.
      return !env.closed && (env.decision === "pending" || (env.redecided === "" && !env.refused && !env.restarted));
    case "kit.restart":
      return !env.restarted && !env.closed;
    case "kit.elsewhere":
      return !env.elsewhere && env.decision === "pending" && !env.refused;
    case "PROMPT": case "APPROVAL.AWAIT": case "APPROVAL.CLEAR": case "prepare.done": case "prepare.refused": case "run.done":
      return false;
    default:
      return assertNever(event, "slot event");
  }
}

/** The restarted harness is about to find the open call (its start-up sends `APPROVAL.AWAIT`). */
const awaitDue = (env: SlotEnvironment) => env.restarted && !env.awaited && !env.closed;

function transition(wrapped: WrappedSnapshot, event: SlotEvent, scope: never): WrappedSnapshot {
  const env = { ...wrapped.env };
  let slot = wrapped.slot;
  const send = (slotEvent: object) => (slot = slotLogic.transition(slot as never, slotEvent as never, scope) as AnyMachineSnapshot);
  switch (event.type) {
    case "PROMPT":
      env.prompted = true;
      send({ type: "PROMPT", runId: "kit-run-1", prompts: [] });
      break;
    case "CONTINUE":
      send({ type: "CONTINUE", runId: "kit-run-2" });
      break;
    case "ABORT":
      send({ type: "ABORT", reason: "aborted by the path while the call waits" });
      break;
    case "APPROVAL.AWAIT":
      env.awaited = true;
      send({ type: event.type });
      break;
    case "APPROVAL.CLEAR":
      env.clearDue = false;
      send({ type: event.type });
      break;
    case "prepare.done":
      send({ type: `xstate.done.actor.${prepareChild(slot)}`, output: { input: { runId: requestOf(slot)!.runId, kind: requestOf(slot)!.kind } } });
      break;
    case "prepare.refused":
      if (env.decision === "pending" && !env.closed) env.refused = true;
      if (env.closed) env.clearDue = true;
      send({ type: `xstate.error.actor.${prepareChild(slot)}`, error: new Error("refused") });
      break;
    case "run.done": {
      const status = runStatusOf(slot);
      if (status !== "suspended") env.closed = true;
      send({ type: "xstate.done.actor.run", output: { runId: requestOf(slot)!.runId, status, messages: [], turns: 0 } });
      break;
    }
    case "kit.approve":
    case "kit.deny": {
      const decision = event.type === "kit.approve" ? "approved" : "denied";
      if (env.decision === "pending") env.decision = decision;
      else env.redecided = env.decision === decision ? "repeat" : "conflict";
      break;
    }
    case "kit.restart":
      env.restarted = true;
      slot = slotLogic.getInitialSnapshot(scope, {}) as AnyMachineSnapshot;
      break;
    case "kit.elsewhere":
      env.elsewhere = true;
      env.decision = "approved";
      env.closed = true;
      break;
    default:
      assertNever(event, "slot event");
  }
  return { slot, env, status: "active", output: undefined, error: undefined };
}

const serialize = (wrapped: WrappedSnapshot) => {
  const request = requestOf(wrapped.slot);
  return JSON.stringify([valueOf(wrapped.slot), request?.kind ?? "", request?.abort ? 1 : 0, wrapped.env]);
};

const STEP_TEXT: Record<SlotEvent["type"], string> = {
  PROMPT: "prompt (the model calls read and the gated write)",
  CONTINUE: "continue()",
  ABORT: "abort() while the call waits",
  "APPROVAL.AWAIT": "the restarted harness finds the call waiting",
  "APPROVAL.CLEAR": "nothing waits any more",
  "prepare.done": "the run is prepared",
  "prepare.refused": "the resume is refused",
  "run.done": "the run ends",
  "kit.approve": "approve(write)",
  "kit.deny": "deny(write)",
  "kit.restart": "the process restarts",
  "kit.elsewhere": "another process approves and resumes",
};

/** Every simple path of the agent machine through its approval states that ends where the slot rests (see the module contract). */
export function slotPaths(): SlotPath[] {
  const logic = {
    getInitialSnapshot: (scope: never) => ({ slot: slotLogic.getInitialSnapshot(scope, {}), env: START, status: "active", output: undefined, error: undefined }),
    transition,
  };
  const paths = getSimplePaths(logic as never, {
    events: EVENTS,
    filterEvents: (snapshot: WrappedSnapshot, event: SlotEvent) => offered(snapshot, event) && (event.type.startsWith("kit.") || event.type.startsWith("prepare.") || event.type === "run.done" || snapshot.slot.can(toSlotEvent(event))),
    serializeState: (snapshot: WrappedSnapshot) => serialize(snapshot),
  } as never) as unknown as { state: WrappedSnapshot; steps: { event: SlotEvent; state: WrappedSnapshot }[] }[];
  const result: SlotPath[] = [];
  for (const path of paths) {
    const end = path.state;
    const state = valueOf(end.slot);
    const rests = end.env.prompted && !end.env.clearDue && !awaitDue(end.env) && (state === "awaiting-approval" || state === "idle");
    if (!rests) continue;
    const steps = stepsOf(path.steps);
    const description = steps.map((step) => `${STEP_TEXT[step.event.type]}${step.runStatus ? ` (${step.runStatus})` : ""} → ${step.state}`).join("; ");
    result.push({ steps, end: end.env, description });
  }
  return result;
}

const toSlotEvent = (event: SlotEvent) => (event.type === "PROMPT" ? { type: "PROMPT", runId: "r", prompts: [] } : event.type === "CONTINUE" ? { type: "CONTINUE", runId: "r" } : event) as never;

/** The path's steps without xstate's initial one (each step holds the state its event reached). */
function stepsOf(steps: { event: SlotEvent | undefined; state: WrappedSnapshot }[]): SlotStep[] {
  const result: SlotStep[] = [];
  for (const [index, step] of steps.entries()) {
    if (!step.event || !(step.event.type in STEP_TEXT)) continue;
    const out: SlotStep = { event: step.event, state: valueOf(step.state.slot) };
    if (step.event.type === "run.done") out.runStatus = runStatusOf(steps[index - 1]!.state.slot);
    result.push(out);
  }
  return result;
}

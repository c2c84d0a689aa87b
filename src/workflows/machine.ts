/**
 * Compiles a workflow's steps to an XState v5 machine (root id `wf`): one state per step invoking the `step` actor (invoke id = step id), fan-outs as
 * parallel regions (`failFast` leaves at the first failure; a waiting approval makes the fan-out `suspended`), branches as `choosing` then the
 * chosen case, then `finishing` → `done`; `failed`, `suspended` and `aborted` are final. No I/O: the runner provides `step` and `finish`.
 */
import { assign, fromPromise, setup, type AnyStateMachine } from "xstate";
import type { WorkflowStep } from "./steps.ts";

/** A step actor's result (the `step` actor's output). */
export type StepResult =
  | { status: "done"; output: unknown }
  | { status: "failed"; code: string; error: string }
  | { status: "suspended" }
  | { status: "aborted"; reason?: string };

/** The input of the `step` actor. */
export interface StepInput {
  stepId: string;
  phase: "run" | "enter" | "leave";
  results: Record<string, unknown>;
  /** Failures of a fan-out's members (phase `leave`). */
  failures: { stepId: string; code: string; error: string }[];
}

/** The machine's context. */
export interface WorkflowMachineContext {
  results: Record<string, unknown>;
  failure?: { stepId?: string; code: string; error: string };
  /** Member failures per fan-out id. */
  failures: Record<string, { stepId: string; code: string; error: string }[]>;
  /** Fan-outs (their ids) with a member waiting for approval. */
  waiting?: Record<string, true>;
  abortReason?: string;
  /** The workflow's output (`finishing` done). */
  output?: unknown;
}

type Result = { output: StepResult };
const missing = (name: string) =>
  fromPromise<StepResult, StepInput>(async () => {
    throw new Error(`the workflow machine's "${name}" actor is not provided (run it through the workflow's run() or resume())`);
  });

const base = setup({
  types: {
    context: {} as WorkflowMachineContext,
    events: {} as { type: "ABORT"; reason?: string },
  },
  actors: { step: missing("step"), finish: missing("finish") },
  guards: {
    done: ({ event }) => (event as unknown as Result).output.status === "done",
    suspended: ({ event }) => (event as unknown as Result).output.status === "suspended",
    aborted: ({ event }) => (event as unknown as Result).output.status === "aborted",
    caseIs: ({ event }, params: { value: string }) => {
      const { output } = event as unknown as Result;
      return output.status === "done" && (output.output as { case?: string }).case === params.value;
    },
  },
});

const failureOf = (stepId: string | undefined, event: unknown) => {
  const output = (event as Partial<Result>).output;
  if (output && output.status === "failed") return { ...(stepId !== undefined ? { stepId } : {}), code: output.code, error: output.error };
  const error = (event as { error?: unknown }).error;
  return { ...(stepId !== undefined ? { stepId } : {}), code: "WORKFLOW_STEP_FAILED", error: error instanceof Error ? error.message : String(error) };
};

const record = (stepId: string) => assign({ results: ({ context, event }) => ({ ...context.results, [stepId]: (event as unknown as { output: { output: unknown } }).output.output }) });
const fail = (stepId: string | undefined) => assign({ failure: ({ event }) => failureOf(stepId, event) });

/** The transitions after a step actor's result, `next` on `done`. */
function settle(stepId: string, next: string) {
  return {
    onDone: [
      { guard: "done" as const, target: next, actions: record(stepId) },
      { guard: "suspended" as const, target: "#wf.suspended" },
      { guard: "aborted" as const, target: "#wf.aborted" },
      { target: "#wf.failed", actions: fail(stepId) },
    ],
    onError: { target: "#wf.failed", actions: fail(stepId) },
  };
}

function invoke(stepId: string, phase: StepInput["phase"], id = stepId) {
  return {
    id,
    src: "step" as const,
    input: ({ context }: { context: WorkflowMachineContext }): StepInput => ({ stepId, phase, results: context.results, failures: context.failures[stepId] ?? [] }),
  };
}

/** The state id of a step (`#step:<id>`). */
const ref = (stepId: string) => `#step:${stepId}`;

function compileStep(step: WorkflowStep, next: string): Record<string, unknown> {
  if (step.kind === "fanOut") {
    const mode = step.mode ?? "all";
    const regions = Object.fromEntries(
      step.steps.map((member) => {
        const memberFailed = assign({
          failures: ({ context, event }) => ({ ...context.failures, [step.id]: [...(context.failures[step.id] ?? []), failureOf(member.id, event) as { stepId: string; code: string; error: string }] }),
        });
        const onFailure = mode === "failFast" ? `#leave:${step.id}` : "failed";
        return [
          member.id,
          {
            initial: "running",
            states: {
              running: {
                invoke: {
                  ...invoke(member.id, "run"),
                  onDone: [
                    { guard: "done" as const, target: "ok", actions: record(member.id) },
                    { guard: "suspended" as const, target: "waiting", actions: assign({ waiting: ({ context }) => ({ ...context.waiting, [step.id]: true as const }) }) },
                    { guard: "aborted" as const, target: "#wf.aborted" },
                    { target: onFailure, actions: memberFailed },
                  ],
                  onError: { target: onFailure, actions: memberFailed },
                },
              },
              ok: { type: "final" },
              waiting: { type: "final" },
              failed: { type: "final" },
            },
          },
        ];
      }),
    );
    return {
      id: `step:${step.id}`,
      initial: "entering",
      states: {
        entering: { invoke: { ...invoke(step.id, "enter", `${step.id}:enter`), ...settle(step.id, "branches") } },
        branches: { type: "parallel", states: regions, onDone: [{ guard: ({ context }: { context: WorkflowMachineContext }) => context.waiting?.[step.id] === true && !context.failures[step.id]?.length, target: "#wf.suspended" }, { target: "leaving" }] },
        leaving: { id: `leave:${step.id}`, invoke: { ...invoke(step.id, "leave", `${step.id}:leave`), ...settle(step.id, next) } },
      },
    };
  }
  if (step.kind === "branch") {
    const cases = Object.entries(step.cases).map(([name, steps]) => ({ name, state: `case:${name}`, steps }));
    const states: Record<string, unknown> = {};
    for (const { state, steps } of [...cases, { state: "otherwise", steps: step.otherwise ?? [] }]) {
      if (state === "otherwise" && step.otherwise === undefined) continue;
      states[state] = steps.length ? { initial: steps[0].id, states: compileSequence(steps, next) } : { always: next };
    }
    const { onDone, onError } = settle(step.id, next);
    const chosen = cases.map(({ name, state }) => ({ guard: { type: "caseIs" as const, params: { value: name } }, target: state, actions: record(step.id) }));
    const otherwise = step.otherwise !== undefined ? [{ guard: "done" as const, target: "otherwise", actions: record(step.id) }] : [];
    states.choosing = { invoke: { ...invoke(step.id, "run"), onDone: [...chosen, ...otherwise, ...onDone.slice(1)], onError } };
    return { id: `step:${step.id}`, initial: "choosing", states };
  }
  return { id: `step:${step.id}`, invoke: { ...invoke(step.id, "run"), ...settle(step.id, next) } };
}

function compileSequence(steps: readonly WorkflowStep[], exit: string): Record<string, unknown> {
  return Object.fromEntries(steps.map((step, index) => [step.id, compileStep(step, index + 1 < steps.length ? ref(steps[index + 1].id) : exit)]));
}

/** The machine of `steps` (see the module contract). Pure: the same steps give the same machine. */
export function compileWorkflowMachine(steps: readonly WorkflowStep[], name = "workflow"): AnyStateMachine {
  // The states are built from data: xstate checks their shape at creation, not the compiler.
  const config: Parameters<typeof base.createMachine>[0] = {
    id: "wf",
    description: name,
    context: { results: {}, failures: {} },
    initial: steps.length ? steps[0].id : "finishing",
    on: { ABORT: { target: "#wf.aborted", actions: assign({ abortReason: ({ event }) => event.reason }) } },
    states: {
      ...compileSequence(steps, "#wf.finishing"),
      finishing: {
        invoke: {
          id: "finish",
          src: "finish",
          input: ({ context }: { context: WorkflowMachineContext }): StepInput => ({ stepId: "finish", phase: "run", results: context.results, failures: [] }),
          onDone: [{ guard: "done", target: "done", actions: assign({ output: ({ event }) => ((event as unknown as Result).output as { output?: unknown }).output }) }, { target: "failed", actions: fail(undefined) }],
          onError: { target: "failed", actions: fail(undefined) },
        },
      },
      done: { type: "final" },
      failed: { type: "final" },
      suspended: { type: "final" },
      aborted: { type: "final" },
    },
  } as never;
  return base.createMachine(config);
}

/**
 * Runs and resumes a workflow run over its stream: `startWorkflow` validates the input, commits `workflow.started` (with the definition's digest)
 * and drives the machine; `resumeWorkflow` replays logged results and runs the rest, refusing a changed definition
 * (`WorkflowDefinitionChangedError`) or a run another live process drives. Every append is version-checked. Outcomes: `done`, `failed`, `aborted`,
 * `suspended`; `signal` aborts the running steps and closes the waiting approvals.
 */
import { randomUUID } from "node:crypto";
import { createActor, fromPromise, waitFor } from "xstate";
import type { z } from "zod";
import type { AgentHarness } from "../harness/create-harness.ts";
import { currentRunOwner, isCurrentRunOwner, isRunOwnerAlive } from "../machines/run-lease.ts";
import type { EventLog, NewEvent } from "../store/event-log.ts";
import { definitionChanges, definitionDigest, definitionShape, digestMatches } from "./definition-digest.ts";
import { WorkflowDefinitionChangedError, WorkflowError, WorkflowRunError } from "./errors.ts";
import { foldWorkflow, workflowStreamId, type WorkflowRunState } from "./fold.ts";
import { compileWorkflowMachine, type StepInput, type StepResult, type WorkflowMachineContext } from "./machine.ts";
import { executeStep, type RunScope } from "./step-exec.ts";
import { flattenSteps, type WorkflowContext, type WorkflowStep } from "./steps.ts";
import { ignoreError } from "../core/ignored.ts";

/** What the runner needs of a definition. */
export interface RunnableWorkflow {
  name: string;
  input: z.ZodType;
  output: z.ZodType;
  steps: readonly WorkflowStep[];
  result?: (ctx: WorkflowContext) => unknown;
}

/**
 * Options of `workflow.run` and `workflow.resume`.
 * @example
 * await workflow.run(input, { harness, workflowId: "release-42", signal: AbortSignal.timeout(600_000) });
 */
export interface WorkflowRunOptions {
  /** The harness whose log holds the workflow's stream and whose models run its agents. */
  harness: AgentHarness;
  /** The new run's id (`run` only; default a UUID): its stream is `workflow-<id>`. */
  workflowId?: string;
  signal?: AbortSignal;
  /** Where artifact paths and agents' sessions resolve; default `process.cwd()`. */
  cwd?: string;
}

/**
 * How a workflow run ended, or that it waits (discriminated by `status`).
 * @example
 * if (outcome.status === "suspended") console.log(`approve ${outcome.pendingApprovals.join(", ")} of ${outcome.workflowId}`);
 */
export type WorkflowOutcome<Output> =
  | { status: "done"; workflowId: string; output: Output }
  | { status: "failed"; workflowId: string; error: WorkflowError }
  | { status: "aborted"; workflowId: string; reason?: string }
  | { status: "suspended"; workflowId: string; pendingApprovals: string[] };

function logOf(harness: AgentHarness): EventLog {
  if (!harness.repository) throw new WorkflowRunError("a workflow needs a harness with a repository (eventLog or eventLogPath): the harness was given a bare session");
  return harness.repository.log;
}

function endedOutcome<Output>(state: WorkflowRunState): WorkflowOutcome<Output> | undefined {
  const ended = state.ended;
  if (!ended) return undefined;
  if (ended.status === "done") return { status: "done", workflowId: state.workflowId, output: ended.output as Output };
  if (ended.status === "aborted") return { status: "aborted", workflowId: state.workflowId, ...(ended.reason !== undefined ? { reason: ended.reason } : {}) };
  return { status: "failed", workflowId: state.workflowId, error: new WorkflowError(ended.code, ended.error, ended.stepId) };
}

/**
 * Starts a run (see the module contract).
 * @throws (rejects) WorkflowRunError for invalid input or a harness without a repository; the log's
 *   `ExpectedVersionConflictError` when the id is taken.
 */
export async function startWorkflow<Output>(definition: RunnableWorkflow, input: unknown, options: WorkflowRunOptions): Promise<WorkflowOutcome<Output>> {
  const log = logOf(options.harness);
  const parsed = definition.input.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.length ? issue.path.map(String).join(".") : "(root)";
    throw new WorkflowRunError(`Invalid input for workflow "${definition.name}" at ${path}: ${issue?.message ?? "invalid"}`, { workflow: definition.name, path });
  }
  const workflowId = options.workflowId ?? randomUUID();
  const shape = definitionShape(definition.steps);
  const started: NewEvent = {
    type: "workflow.started",
    data: {
      workflowId,
      workflow: definition.name,
      input: parsed.data ?? null,
      steps: flattenSteps(definition.steps).map(({ step }) => step.id),
      definition: { digest: definitionDigest(shape), steps: shape },
    },
    metadata: { owner: currentRunOwner() },
  };
  await log.append(workflowStreamId(workflowId), [started], { expectedVersion: "no_stream" });
  return drive<Output>(definition, log, foldWorkflow(await log.readStream(workflowStreamId(workflowId)))!, options);
}

/**
 * Resumes run `workflowId` (see the module contract).
 * @throws (rejects) WorkflowRunError for an unknown id, a run of another workflow, or a run another live process drives.
 */
export async function resumeWorkflow<Output>(definition: RunnableWorkflow, workflowId: string, options: WorkflowRunOptions): Promise<WorkflowOutcome<Output>> {
  const log = logOf(options.harness);
  const state = foldWorkflow(await log.readStream(workflowStreamId(workflowId)));
  if (!state) throw new WorkflowRunError(`No workflow run "${workflowId}" in this log.`, { workflowId });
  if (state.workflow !== definition.name) throw new WorkflowRunError(`Workflow run "${workflowId}" is a run of "${state.workflow}", not "${definition.name}".`, { workflowId, workflow: state.workflow });
  // The definition must be the one the run started with: logged results are replayed by step id.
  const shape = definitionShape(definition.steps);
  const currentDigest = definitionDigest(shape);
  if (state.definition ? !digestMatches(state.definition.digest, shape) : definitionChanges(state.stepIds, shape).length > 0) {
    const changes = definitionChanges(state.definition?.steps ?? state.stepIds, shape);
    throw new WorkflowDefinitionChangedError({
      workflowId,
      workflow: definition.name,
      changes: changes.length > 0 ? changes : ["the definition's digest differs"],
      ...(state.definition ? { storedDigest: state.definition.digest } : {}),
      currentDigest,
    });
  }
  const ended = endedOutcome<Output>(state);
  if (ended) return ended;
  const owners = [...state.steps.values()].map((record) => record.owner as { pid?: number } | undefined);
  const last = owners[owners.length - 1];
  // Another process is one that is not this one by pid, host and start time: replicas in containers often share a pid.
  if (last && !isCurrentRunOwner(last) && isRunOwnerAlive(last)) {
    throw new WorkflowRunError(`Workflow run "${workflowId}" is being driven by process ${String(last.pid)}; resume it once that process ended.`, { workflowId, owner: last });
  }
  return drive<Output>(definition, log, state, options);
}

async function drive<Output>(definition: RunnableWorkflow, log: EventLog, state: WorkflowRunState, options: WorkflowRunOptions): Promise<WorkflowOutcome<Output>> {
  const streamId = workflowStreamId(state.workflowId);
  let expected = state.version;
  let chain: Promise<unknown> = Promise.resolve();
  const append = (events: NewEvent[]): Promise<void> => {
    const next = chain.then(async () => {
      const result = await log.append(streamId, events, { expectedVersion: expected });
      expected = result.nextExpectedVersion;
    });
    chain = next.catch(ignoreError("a failed workflow append rejects its own caller; the chain goes on"));
    return next;
  };
  const scope: RunScope = {
    workflowId: state.workflowId,
    workflow: definition.name,
    harness: options.harness,
    cwd: options.cwd ?? process.cwd(),
    state,
    steps: new Map(flattenSteps(definition.steps).map((entry) => [entry.step.id, entry])),
    append,
    inFlight: new Map(),
    asked: new Set(),
  };
  const step = fromPromise<StepResult, StepInput>(({ input, signal }) => {
    const running = executeStep(scope, input, signal);
    if (input.phase === "run") scope.inFlight.set(input.stepId, running);
    return running;
  });
  const finish = fromPromise<StepResult, StepInput>(async ({ input }) => {
    const ctx: WorkflowContext = { workflowId: state.workflowId, input: state.input, results: input.results };
    const last = definition.steps[definition.steps.length - 1];
    const value = definition.result ? await definition.result(ctx) : last ? input.results[last.id] : null;
    const parsed = definition.output.safeParse(value);
    if (parsed.success) return { status: "done", output: JSON.parse(JSON.stringify(parsed.data ?? null)) };
    const issue = parsed.error.issues[0];
    return { status: "failed", code: "WORKFLOW_OUTPUT_INVALID", error: `the output of workflow "${definition.name}" fails its schema at ${issue?.path.length ? issue.path.join(".") : "(root)"}: ${issue?.message ?? "invalid"}` };
  });
  const machine = compileWorkflowMachine(definition.steps, definition.name).provide({ actors: { step, finish } });
  const actor = createActor(machine).start();
  const onAbort = () => actor.send({ type: "ABORT", reason: options.signal?.reason instanceof Error ? options.signal.reason.message : "aborted" });
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  let snapshot;
  try {
    snapshot = await waitFor(actor, (current) => current.status !== "active");
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  await Promise.allSettled(scope.inFlight.values());
  const context = snapshot.context as WorkflowMachineContext;
  const common = { workflowId: state.workflowId, workflow: definition.name };
  const value = String(snapshot.value);
  if (value === "done") {
    await append([{ type: "workflow.ended", data: { ...common, status: "done", output: context.output ?? null } }]);
    return { status: "done", workflowId: state.workflowId, output: context.output as Output };
  }
  if (value === "suspended") {
    await chain;
    const pendingApprovals = [...scope.asked];
    return { status: "suspended", workflowId: state.workflowId, pendingApprovals };
  }
  if (value === "aborted") {
    const reason = context.abortReason ?? "aborted";
    const waiting = [...new Set([...state.pendingApprovals, ...scope.asked])];
    const closes: NewEvent[] = waiting.map((stepId) => ({ type: "approval.ended", data: { toolCallId: stepId, toolName: definition.name, status: "cancelled", reason: `the workflow was aborted: ${reason}` } }));
    await append([...closes, { type: "workflow.ended", data: { ...common, status: "aborted", reason } }]);
    return { status: "aborted", workflowId: state.workflowId, reason };
  }
  const failure = context.failure ?? { code: "WORKFLOW_STEP_FAILED", error: `the machine stopped in ${value}` };
  // An approval a fan-out asked for while a sibling failed is closed with the run.
  const open = [...scope.asked].filter((stepId) => !scope.state.steps.get(stepId)?.ended);
  const closes: NewEvent[] = open.map((stepId) => ({ type: "approval.ended", data: { toolCallId: stepId, toolName: definition.name, status: "cancelled", reason: `the workflow failed: ${failure.error}` } }));
  await append([...closes, { type: "workflow.ended", data: { ...common, status: "failed", code: failure.code, error: failure.error, ...(failure.stepId !== undefined ? { stepId: failure.stepId } : {}) } }]);
  return { status: "failed", workflowId: state.workflowId, error: new WorkflowError(failure.code, failure.error, failure.stepId) };
}

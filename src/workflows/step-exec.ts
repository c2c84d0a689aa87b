/**
 * Executes one workflow step (the machine's `step` actor), or replays its logged result. `step.started` is committed before the step acts; a step
 * cut off by a crash runs again only when safe, else ends `interrupted`; an agent step records its session first and goes on in it. Results are
 * JSON round-tripped so replays match. Failures are `failed` results with a code; only a refused append rejects.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { AgentHarness } from "../harness/create-harness.ts";
import { inputDigest } from "../machines/approval-fold.ts";
import { currentRunOwner } from "../machines/run-lease.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { WorkflowRunState } from "./fold.ts";
import type { StepInput, StepResult } from "./machine.ts";
import type { WorkflowContext, WorkflowStep } from "./steps.ts";

/** What a run's step executions share. */
export interface RunScope {
  workflowId: string;
  workflow: string;
  harness: AgentHarness;
  cwd: string;
  state: WorkflowRunState;
  steps: Map<string, { step: WorkflowStep; parent?: string }>;
  append(events: NewEvent[]): Promise<void>;
  /** Executions in flight, by step id (a fan-out's `leave` waits for its members). */
  inFlight: Map<string, Promise<unknown>>;
  /** Approval steps asked in this run (closed by an abort). */
  asked: Set<string>;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const json = (value: unknown): unknown => (value === undefined ? null : JSON.parse(JSON.stringify(value)));

function replay(ended: NonNullable<ReturnType<WorkflowRunState["steps"]["get"]>>["ended"]): StepResult | undefined {
  if (!ended) return undefined;
  if (ended.status === "done") return { status: "done", output: ended.output };
  if (ended.status === "aborted") return { status: "aborted", ...(ended.reason !== undefined ? { reason: ended.reason } : {}) };
  if (ended.status === "interrupted") return { status: "failed", code: "WORKFLOW_STEP_INTERRUPTED", error: ended.reason };
  return { status: "failed", code: ended.code, error: ended.error };
}

/**
 * Executes or replays one step (see the module contract).
 * @throws (rejects) only when the log refuses an append (e.g. `ExpectedVersionConflictError`).
 */
export async function executeStep(scope: RunScope, input: StepInput, signal: AbortSignal): Promise<StepResult> {
  const { step, parent } = scope.steps.get(input.stepId)!;
  const record = scope.state.steps.get(step.id);
  const ctx: WorkflowContext = { workflowId: scope.workflowId, input: scope.state.input, results: input.results };
  const common = { workflowId: scope.workflowId, stepId: step.id, kind: step.kind };
  const started = (attempt: number): NewEvent => ({ type: "step.started", data: { ...common, attempt, ...(parent !== undefined ? { parentStepId: parent } : {}) }, metadata: { owner: currentRunOwner() } });

  if (step.kind === "fanOut" && input.phase === "enter") {
    if (!record) await scope.append([started(1)]);
    return { status: "done", output: {} };
  }
  const attemptNow = Math.max(record?.attempts ?? 0, 1);
  const ended = (result: StepResult, sessionId?: string, attempt = attemptNow): NewEvent => {
    const session = sessionId !== undefined ? { sessionId } : {};
    if (result.status === "done") return { type: "step.ended", data: { ...common, attempt, status: "done", output: result.output, ...session } };
    if (result.status === "aborted") return { type: "step.ended", data: { ...common, attempt, status: "aborted", ...(result.reason !== undefined ? { reason: result.reason } : {}), ...session } };
    return { type: "step.ended", data: { ...common, attempt, status: "failed", code: result.status === "failed" ? result.code : "WORKFLOW_STEP_FAILED", error: result.status === "failed" ? result.error : "suspended", ...session } };
  };
  if (step.kind === "fanOut") {
    const logged = replay(record?.ended);
    if (logged) return logged;
    await Promise.allSettled(step.steps.map((member) => scope.inFlight.get(member.id)));
    const result: StepResult = input.failures.length
      ? { status: "failed", code: "WORKFLOW_STEP_FAILED", error: input.failures.map((failure) => `${failure.stepId}: ${failure.error}`).join("; ") }
      : { status: "done", output: Object.fromEntries(step.steps.map((member) => [member.id, input.results[member.id] ?? null])) };
    await scope.append([ended(result)]);
    return result;
  }
  if (step.kind === "approval") return approve(scope, step, record, ctx, started);

  const logged = replay(record?.ended);
  if (logged) return logged;
  if (record) {
    const safe = step.kind === "branch" || step.kind === "artifact" || step.retry === "safe";
    if (!safe) {
      const reason = `the process running attempt ${record.attempts} of step "${step.id}" ended before the step did, and the step is not declared safe to retry (retry: "safe")`;
      await scope.append([{ type: "step.ended", data: { ...common, attempt: record.attempts, status: "interrupted", reason, ...(record.sessionId ? { sessionId: record.sessionId } : {}) } }]);
      return { status: "failed", code: "WORKFLOW_STEP_INTERRUPTED", error: reason };
    }
  }
  const next = (record?.attempts ?? 0) + 1;
  const end = (result: StepResult, sessionId?: string): NewEvent => ended(result, sessionId, next);

  if (step.kind === "branch") {
    let result: StepResult;
    try {
      const value = step.on(ctx);
      const known = Object.hasOwn(step.cases, value) || step.otherwise !== undefined;
      result = known ? { status: "done", output: { case: value } } : { status: "failed", code: "WORKFLOW_BRANCH_UNMATCHED", error: `branch "${step.id}" has no case "${value}" and no otherwise` };
    } catch (error) {
      result = { status: "failed", code: "WORKFLOW_STEP_FAILED", error: message(error) };
    }
    await scope.append([started(next), end(result)]);
    return result;
  }

  await scope.append([started(next)]);
  if (step.kind === "agent") {
    const resumeSession = record?.sessionId;
    let sessionId = resumeSession;
    let result: StepResult;
    try {
      const agentInput = step.input ? step.input(ctx) : ctx.input;
      const outcome = await step.agent.run(agentInput, {
        harness: scope.harness,
        signal,
        cwd: scope.cwd,
        metadata: { workflowId: scope.workflowId, stepId: step.id },
        ...(resumeSession !== undefined ? { resumeSession } : {}),
        onSession: async (id: string) => {
          sessionId = id;
          if (id !== resumeSession) await scope.append([{ type: "step.updated", data: { ...common, attempt: next, sessionId: id } }]);
        },
      });
      if (outcome.status === "done") result = { status: "done", output: json(outcome.output) };
      else if (outcome.status === "aborted") result = { status: "aborted", reason: outcome.error.message };
      // An agent step whose tools wait for approval is not resumed by the workflow yet: the step fails, naming where the calls wait.
      else if (outcome.status === "suspended") result = { status: "failed", code: "WORKFLOW_AGENT_SUSPENDED", error: `agent "${outcome.agent}" stopped for tool approval (${outcome.pendingApprovals.join(", ")}) in session ${outcome.sessionId}; workflows do not resume an agent's gated tools (use an approval step)` };
      else result = { status: "failed", code: outcome.error.code, error: outcome.error.message };
    } catch (error) {
      result = signal.aborted ? { status: "aborted", reason: message(error) } : { status: "failed", code: "WORKFLOW_STEP_FAILED", error: message(error) };
    }
    await scope.append([end(result, sessionId)]);
    return result;
  }

  let result: StepResult;
  try {
    if (step.kind === "code") {
      const value = await step.run(ctx, { signal, attempt: next });
      result = signal.aborted ? { status: "aborted", reason: "the workflow was aborted" } : { status: "done", output: json(value) };
    } else {
      result = writeArtifact(scope.cwd, typeof step.path === "function" ? step.path(ctx) : step.path, step.content(ctx));
    }
  } catch (error) {
    result = signal.aborted ? { status: "aborted", reason: message(error) } : { status: "failed", code: "WORKFLOW_STEP_FAILED", error: message(error) };
  }
  await scope.append([end(result)]);
  return result;
}

/** Writes `content` to `path` atomically (a temporary file renamed); an existing different file is refused. */
function writeArtifact(cwd: string, path: string, content: string | Uint8Array): StepResult {
  const target = resolve(cwd, path);
  const bytes = typeof content === "string" ? Buffer.from(content) : Buffer.from(content);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (existsSync(target) && !readFileSync(target).equals(bytes)) {
    return { status: "failed", code: "WORKFLOW_STEP_FAILED", error: `the artifact ${target} exists with other content; it is not overwritten` };
  }
  mkdirSync(dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, target);
  return { status: "done", output: { path: target, bytes: bytes.length, sha256 } };
}

async function approve(
  scope: RunScope,
  step: Extract<WorkflowStep, { kind: "approval" }>,
  record: ReturnType<WorkflowRunState["steps"]["get"]>,
  ctx: WorkflowContext,
  started: (attempt: number) => NewEvent,
): Promise<StepResult> {
  const logged = replay(record?.ended);
  if (logged) return logged;
  const gate = scope.state.gates.get(step.id);
  if (!gate) {
    const text = typeof step.message === "function" ? step.message(ctx) : (step.message ?? `Approve step "${step.id}" of workflow "${scope.workflow}"?`);
    const digest = inputDigest({ stepId: step.id, message: text, results: ctx.results });
    await scope.append([started(1), { type: "approval.requested", data: { runId: scope.workflowId, toolCallId: step.id, toolName: scope.workflow, inputDigest: digest, source: "workflow" }, metadata: { message: text } }]);
    scope.asked.add(step.id);
    return { status: "suspended" };
  }
  if (gate.status === "pending") {
    scope.asked.add(step.id);
    return { status: "suspended" };
  }
  const common = { workflowId: scope.workflowId, stepId: step.id, kind: "approval" as const, attempt: Math.max(record?.attempts ?? 1, 1) };
  const reason = gate.reason !== undefined ? { reason: gate.reason } : {};
  let result: StepResult;
  if (gate.status === "approved") result = { status: "done", output: { approved: true, ...reason } };
  else if (gate.status === "cancelled") result = { status: "aborted", reason: gate.reason ?? "the approval was cancelled" };
  else if (step.onDeny === "continue") result = { status: "done", output: { approved: false, ...reason } };
  else result = { status: "failed", code: "WORKFLOW_APPROVAL_DENIED", error: `step "${step.id}" was denied${gate.reason ? `: ${gate.reason}` : ""}` };
  const data =
    result.status === "done"
      ? { ...common, status: "done" as const, output: result.output }
      : result.status === "aborted"
        ? { ...common, status: "aborted" as const, reason: result.reason }
        : { ...common, status: "failed" as const, code: (result as { code: string }).code, error: (result as { error: string }).error };
  await scope.append([{ type: "step.ended", data }]);
  return result;
}

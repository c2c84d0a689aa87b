/**
 * The workflow fold: a run's state from its stream, pure. `status` is the logged end, else `awaiting-approval`, else `running` or `interrupted` by
 * whether the last step's process lives; per step its attempts, session and logged result (which a resume reuses); per approval its decision.
 */
import type { StoredEvent } from "../store/event-log.ts";
import { isEventOfType, type ArborEventData } from "../store/events/catalogue.ts";
import type { StepShape } from "./definition-digest.ts";
import { isCurrentRunOwner, isRunOwnerAlive } from "../machines/run-lease.ts";
import type { ApprovalEndStatus } from "../core/vocabulary.ts";

/**
 * The stream of workflow run `id`.
 * @example
 * workflowStreamId("0193a…"); // "workflow-0193a…"
 */
export function workflowStreamId(id: string): string {
  return `workflow-${id}`;
}

/** The workflow id of a workflow stream id, or undefined. */
export function workflowIdOfStream(streamId: string): string | undefined {
  return streamId.startsWith("workflow-") ? streamId.slice("workflow-".length) : undefined;
}

/** One step as the log tells it. */
export interface StepRecord {
  stepId: string;
  attempts: number;
  sessionId?: string;
  ended?: ArborEventData<"step.ended">;
  /** `metadata.owner` of the last `step.started`. */
  owner?: unknown;
}

/** One approval step's decision state. */
export interface GateRecord {
  stepId: string;
  status: "pending" | ApprovalEndStatus;
  inputDigest: string;
  requestedAt: string;
  reason?: string;
  /** What the approver is asked (the request's `metadata.message`). */
  message?: string;
}

/**
 * A workflow run, folded.
 * @example
 * const { status, steps } = foldWorkflow(events)!;
 */
export interface WorkflowRunState {
  workflowId: string;
  workflow: string;
  input: unknown;
  /** Every step id (`workflow.started.steps`). */
  stepIds: string[];
  /** The definition's shape and digest the run started with (`workflow.started` v2; absent for a v1 run). */
  definition?: { digest: string; steps: StepShape[] };
  status: "running" | "interrupted" | "awaiting-approval" | "done" | "failed" | "aborted";
  startedAt: string;
  updatedAt: string;
  /** The stream's version (the next append's expected version). */
  version: number;
  steps: Map<string, StepRecord>;
  gates: Map<string, GateRecord>;
  /** Approval steps that wait for a decision. */
  pendingApprovals: string[];
  ended?: ArborEventData<"workflow.ended">;
}

/**
 * Folds a workflow stream's events (see the module contract); undefined without `workflow.started`.
 * @example
 * const run = foldWorkflow(await log.readStream(workflowStreamId(id)));
 */
export function foldWorkflow(events: readonly StoredEvent[]): WorkflowRunState | undefined {
  let state: WorkflowRunState | undefined;
  let owner: unknown;
  for (const event of events) {
    if (isEventOfType(event, "workflow.started")) {
      owner = event.metadata.owner;
      state = { workflowId: event.data.workflowId, workflow: event.data.workflow, input: event.data.input, stepIds: event.data.steps, status: "running", startedAt: event.time, updatedAt: event.time, version: 0, steps: new Map(), gates: new Map(), pendingApprovals: [] };
      if (event.data.definition) state.definition = event.data.definition;
    }
    if (!state) continue;
    state.version = event.version;
    state.updatedAt = event.time;
    if (isEventOfType(event, "step.started")) {
      const record = state.steps.get(event.data.stepId) ?? { stepId: event.data.stepId, attempts: 0 };
      record.attempts = event.data.attempt;
      record.owner = owner = event.metadata.owner;
      state.steps.set(event.data.stepId, record);
    } else if (isEventOfType(event, "step.updated")) {
      const record = state.steps.get(event.data.stepId);
      if (record) record.sessionId = event.data.sessionId;
    } else if (isEventOfType(event, "step.ended")) {
      const record = state.steps.get(event.data.stepId) ?? { stepId: event.data.stepId, attempts: event.data.attempt };
      record.ended = event.data;
      state.steps.set(event.data.stepId, record);
    } else if (isEventOfType(event, "approval.requested")) {
      const message = typeof event.metadata.message === "string" ? { message: event.metadata.message } : {};
      state.gates.set(event.data.toolCallId, { stepId: event.data.toolCallId, status: "pending", inputDigest: event.data.inputDigest, requestedAt: event.time, ...message });
    } else if (isEventOfType(event, "approval.ended")) {
      const gate = state.gates.get(event.data.toolCallId);
      if (gate) {
        gate.status = event.data.status;
        if (event.data.reason !== undefined) gate.reason = event.data.reason;
      }
    } else if (isEventOfType(event, "workflow.ended")) {
      state.ended = event.data;
    }
  }
  if (!state) return undefined;
  state.pendingApprovals = [...state.gates.values()].filter((gate) => gate.status === "pending").map((gate) => gate.stepId);
  if (state.ended) state.status = state.ended.status;
  else if (state.pendingApprovals.length) state.status = "awaiting-approval";
  else state.status = isRunOwnerAlive(owner) || isCurrentRunOwner(owner) ? "running" : "interrupted";
  return state;
}

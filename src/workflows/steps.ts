/**
 * The step kinds of a workflow and their builders (ours; purista's workflow handler
 * made declarative, so it compiles to a machine and each step is logged).
 *
 * Contract:
 * - a step has an `id` (`[A-Za-z][A-Za-z0-9_-]*`, unique in the whole workflow, nested steps
 *   included): its result is `ctx.results[id]` for later steps, and its events in the log carry it;
 * - `agentStep`: runs a `defineAgent` agent on `input(ctx)` in its own session (linked to the
 *   workflow: metadata `{ workflowId, stepId }`); the result is the agent's typed output;
 * - `codeStep`: runs deterministic code `run(ctx, { signal, attempt })`; the result is its
 *   (JSON) return value;
 * - `fanOut`: runs its steps (agent, code, artifact, approval) at once; `mode: "all"` (default)
 *   waits for every one and fails if any failed, `"failFast"` aborts the others at the first
 *   failure; an approval member waits while its siblings run, and once they settled the workflow
 *   is `suspended` (a resume after the decision replays the siblings and leaves the fan-out); the
 *   result is `{ [stepId]: result }`;
 * - `branch`: `on(ctx)` picks a case by name (`cases`, else `otherwise`); the chosen case's steps
 *   run next; the result is `{ case }`; no matching case fails the workflow;
 * - `approvalStep`: waits for a human decision (the approval mechanism of `docs/approval.md`);
 *   the result is `{ approved, reason? }`; a denial fails the workflow unless `onDeny: "continue"`;
 * - `artifactStep`: writes `content(ctx)` to `path(ctx)` (relative to the run's `cwd`) atomically;
 *   the result is `{ path, bytes, sha256 }`; an existing different file is never overwritten
 *   (the step fails), except by a retry of the same step;
 * - `retry: "safe"` declares a step safe to run again when a crash cut it off; without it an
 *   interrupted step ends `interrupted` and the workflow fails. Agent steps retried this way go
 *   on in their own session (its log says which tool calls already ran); branch choices, fan-out
 *   markers, approvals and artifact writes are always safe.
 *
 * @example
 * ```ts
 * const steps = [
 *   agentStep({ id: "triage", agent: triage, input: (ctx) => ctx.input.title, retry: "safe" }),
 *   approvalStep({ id: "ship", message: (ctx) => `ship ${ctx.results.triage.label}?` }),
 * ];
 * ```
 */
import type { TypedAgent } from "../agents/define-agent.ts";

/**
 * What step functions see: the workflow's id, its validated input and the results so far.
 *
 * @example
 * ```ts
 * const input = (ctx: WorkflowContext<{ title: string }>) => ctx.input.title + String(ctx.results.triage);
 * ```
 */
export interface WorkflowContext<Input = any> {
  readonly workflowId: string;
  readonly input: Input;
  /** Results of the steps that finished, by step id (logged results on a resume). */
  readonly results: Readonly<Record<string, any>>;
}

/** Fields every step has. */
export interface StepBase {
  id: string;
  /** `"safe"`: run again after a crash cut the step off; default `"never"` (see the module contract). */
  retry?: "safe" | "never";
}

/** Runs a typed agent (see the module contract). */
export interface AgentStep<Input = any> extends StepBase {
  kind: "agent";
  agent: TypedAgent<any, any>;
  /** The agent's input (default: the workflow's input). */
  input?: (ctx: WorkflowContext<Input>) => unknown;
}

/** Runs deterministic code (see the module contract). */
export interface CodeStep<Input = any> extends StepBase {
  kind: "code";
  run: (ctx: WorkflowContext<Input>, options: { signal: AbortSignal; attempt: number }) => unknown;
}

/** Writes a file (see the module contract). */
export interface ArtifactStep<Input = any> extends StepBase {
  kind: "artifact";
  path: string | ((ctx: WorkflowContext<Input>) => string);
  content: (ctx: WorkflowContext<Input>) => string | Uint8Array;
}

/** Waits for a human decision (see the module contract). */
export interface ApprovalStep<Input = any> {
  kind: "approval";
  id: string;
  /** What the approver is asked (shown by `arbor workflows` and `pendingWorkflowApprovals`). */
  message?: string | ((ctx: WorkflowContext<Input>) => string);
  /** `"fail"` (default): a denial fails the workflow; `"continue"`: the result is `{ approved: false }`. */
  onDeny?: "fail" | "continue";
}

/** A step a fan-out can run. */
export type FanOutMember<Input = any> = AgentStep<Input> | CodeStep<Input> | ArtifactStep<Input> | ApprovalStep<Input>;

/** Runs steps at once (see the module contract). */
export interface FanOutStep<Input = any> {
  kind: "fanOut";
  id: string;
  mode?: "all" | "failFast";
  steps: FanOutMember<Input>[];
}

/** Chooses the steps that follow (see the module contract). */
export interface BranchStep<Input = any> {
  kind: "branch";
  id: string;
  on: (ctx: WorkflowContext<Input>) => string;
  cases: Record<string, WorkflowStep<Input>[]>;
  otherwise?: WorkflowStep<Input>[];
}

/**
 * Any step.
 *
 * @example
 * ```ts
 * const step: WorkflowStep = codeStep({ id: "sum", run: (ctx) => ctx.input.a + ctx.input.b });
 * ```
 */
export type WorkflowStep<Input = any> = FanOutMember<Input> | ApprovalStep<Input> | FanOutStep<Input> | BranchStep<Input>;

/**
 * An agent step.
 *
 * @example
 * ```ts
 * agentStep({ id: "triage", agent: triage, input: (ctx) => ({ title: ctx.input.title }), retry: "safe" });
 * ```
 */
export function agentStep<Input = any>(step: Omit<AgentStep<Input>, "kind">): AgentStep<Input> {
  return { ...step, kind: "agent" };
}

/**
 * A code step.
 *
 * @example
 * ```ts
 * codeStep({ id: "score", run: (ctx) => ctx.results.review.score * 2 });
 * ```
 */
export function codeStep<Input = any>(step: Omit<CodeStep<Input>, "kind">): CodeStep<Input> {
  return { ...step, kind: "code" };
}

/**
 * An artifact step.
 *
 * @example
 * ```ts
 * artifactStep({ id: "report", path: "report.md", content: (ctx) => ctx.results.summary });
 * ```
 */
export function artifactStep<Input = any>(step: Omit<ArtifactStep<Input>, "kind">): ArtifactStep<Input> {
  return { ...step, kind: "artifact" };
}

/**
 * An approval step.
 *
 * @example
 * ```ts
 * approvalStep({ id: "publish", message: "Publish the report?" });
 * ```
 */
export function approvalStep<Input = any>(step: Omit<ApprovalStep<Input>, "kind">): ApprovalStep<Input> {
  return { ...step, kind: "approval" };
}

/**
 * A fan-out.
 *
 * @example
 * ```ts
 * fanOut({ id: "reviews", mode: "failFast", steps: [agentStep({ id: "style", agent: style }), agentStep({ id: "safety", agent: safety })] });
 * ```
 */
export function fanOut<Input = any>(step: Omit<FanOutStep<Input>, "kind">): FanOutStep<Input> {
  return { ...step, kind: "fanOut" };
}

/**
 * A branch.
 *
 * @example
 * ```ts
 * branch({ id: "route", on: (ctx) => ctx.results.triage.label, cases: { bug: [agentStep({ id: "fix", agent: fixer })] }, otherwise: [] });
 * ```
 */
export function branch<Input = any>(step: Omit<BranchStep<Input>, "kind">): BranchStep<Input> {
  return { ...step, kind: "branch" };
}

/** Every step of `steps`, nested ones included, in definition order, with its enclosing fan-out. */
export function flattenSteps(steps: readonly WorkflowStep[], parent?: string): { step: WorkflowStep; parent?: string }[] {
  return steps.flatMap((step) => {
    const self = [{ step, ...(parent !== undefined ? { parent } : {}) }];
    if (step.kind === "fanOut") return [...self, ...flattenSteps(step.steps, step.id)];
    if (step.kind === "branch") return [...self, ...Object.values(step.cases).flatMap((list) => flattenSteps(list, parent)), ...flattenSteps(step.otherwise ?? [], parent)];
    return self;
  });
}

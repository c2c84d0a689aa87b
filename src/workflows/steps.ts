/**
 * The step kinds of a workflow and their builders (purista's workflow handler made declarative): `agentStep` (a `defineAgent` agent in its own
 * linked session), `codeStep`, `fanOut` (`all` or `failFast`), `branch` (a case by name), `approvalStep` (`docs/approval.md`), `artifactStep` (an
 * atomic write that never overwrites a different file). Step ids are unique in the workflow and key `ctx.results`. `retry: "safe"` lets a step cut
 * off by a crash run again; otherwise it ends `interrupted` and the workflow fails.
 */
import type { TypedAgent } from "../agents/define-agent.ts";

/** The results a step function of an array-form workflow sees: by step id, untyped (see {@link WorkflowResults} for the typed ones). */
export type StepResults = Readonly<Record<string, any>>;

/**
 * What step functions see: the workflow's id, its validated input and the results so far.
 * `result(ctx)` of `defineWorkflow` gets `Results` typed from the steps ({@link WorkflowResults}).
 * @example
 * const input = (ctx: WorkflowContext<{ title: string }>) => ctx.input.title + String(ctx.results.triage);
 */
export interface WorkflowContext<Input = any, Results = StepResults> {
  readonly workflowId: string;
  readonly input: Input;
  /** Results of the steps that finished, by step id (logged results on a resume). */
  readonly results: Results;
}

/** Fields every step has. */
export interface StepBase<Id extends string = string> {
  id: Id;
  /** `"safe"`: run again after a crash cut the step off; default `"never"` (see the module contract). */
  retry?: "safe" | "never";
}

/** Runs a typed agent (see the module contract). */
export interface AgentStep<Input = any, Id extends string = string, Agent extends TypedAgent<any, any> = TypedAgent<any, any>, Results = StepResults> extends StepBase<Id> {
  kind: "agent";
  agent: Agent;
  /** The agent's input (default: the workflow's input). */
  input?: (ctx: WorkflowContext<Input, Results>) => unknown;
}

/** Runs deterministic code (see the module contract). */
export interface CodeStep<Input = any, Id extends string = string, Output = unknown, Results = StepResults> extends StepBase<Id> {
  kind: "code";
  run: (ctx: WorkflowContext<Input, Results>, options: { signal: AbortSignal; attempt: number }) => Output | Promise<Output>;
}

/** Writes a file (see the module contract). */
export interface ArtifactStep<Input = any, Id extends string = string, Results = StepResults> extends StepBase<Id> {
  kind: "artifact";
  path: string | ((ctx: WorkflowContext<Input, Results>) => string);
  content: (ctx: WorkflowContext<Input, Results>) => string | Uint8Array;
}

/** Waits for a human decision (see the module contract). */
export interface ApprovalStep<Input = any, Id extends string = string, Results = StepResults> {
  kind: "approval";
  id: Id;
  /** What the approver is asked (shown by `arbor workflows` and `pendingWorkflowApprovals`). */
  message?: string | ((ctx: WorkflowContext<Input, Results>) => string);
  /** `"fail"` (default): a denial fails the workflow; `"continue"`: the result is `{ approved: false }`. */
  onDeny?: "fail" | "continue";
}

/** A step a fan-out can run. */
export type FanOutMember<Input = any, Results = StepResults> =
  | AgentStep<Input, string, TypedAgent<any, any>, Results>
  | CodeStep<Input, string, any, Results>
  | ArtifactStep<Input, string, Results>
  | ApprovalStep<Input, string, Results>;

/** Runs steps at once (see the module contract); the members see the results of the steps before the fan-out. */
export interface FanOutStep<Input = any, Id extends string = string, Members extends readonly FanOutMember<any, any>[] = FanOutMember<Input>[]> {
  kind: "fanOut";
  id: Id;
  mode?: "all" | "failFast";
  steps: Members;
}

/** Chooses the steps that follow (see the module contract); `on` and the cases' steps see the results of the steps before the branch. */
export interface BranchStep<
  Input = any,
  Id extends string = string,
  Cases extends Record<string, readonly WorkflowStep<any, any>[]> = Record<string, WorkflowStep<Input>[]>,
  Otherwise extends readonly WorkflowStep<any, any>[] = WorkflowStep<Input>[],
  Results = StepResults,
> {
  kind: "branch";
  id: Id;
  on: (ctx: WorkflowContext<Input, Results>) => string;
  cases: Cases;
  otherwise?: Otherwise;
}

/**
 * Any step.
 * @example
 * const step: WorkflowStep = codeStep({ id: "sum", run: (ctx) => ctx.input.a + ctx.input.b });
 */
export type WorkflowStep<Input = any, Results = StepResults> =
  | FanOutMember<Input, Results>
  | FanOutStep<Input, string, readonly FanOutMember<Input, Results>[]>
  | BranchStep<Input, string, Record<string, readonly WorkflowStep<Input, Results>[]>, readonly WorkflowStep<Input, Results>[], Results>;

/** An artifact step's result. */
export interface ArtifactResult {
  path: string;
  bytes: number;
  sha256: string;
}

/** An approval step's result. */
export interface ApprovalResult {
  approved: boolean;
  reason?: string;
}

/** The result of one step, from its kind: the agent's output type, the code's return value, and so on. */
export type StepOutput<Step> = Step extends { kind: "agent"; agent: { run(...args: any[]): Promise<infer Outcome> } }
  ? Extract<Outcome, { status: "done" }> extends { output: infer Output } ? Output : unknown
  : Step extends { kind: "code"; run: (...args: any[]) => infer Returned }
    ? Awaited<Returned>
    : Step extends { kind: "artifact" }
      ? ArtifactResult
      : Step extends { kind: "approval" }
        ? ApprovalResult
        : Step extends { kind: "fanOut"; steps: readonly (infer Member)[] }
          ? { [M in Member as M extends { id: infer Id extends string } ? Id : never]: StepOutput<M> }
          : Step extends { kind: "branch" }
            ? { case: string }
            : unknown;

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

/** One `{ id: result }` entry per step of the union `Step` and per step nested in it (a branch's steps are optional: only one case runs). */
type ResultEntries<Step, Optional extends boolean> = Step extends { id: infer Id extends string }
  ? string extends Id
    ? never
    :
        | (Optional extends true ? { readonly [K in Id]?: StepOutput<Step> } : { readonly [K in Id]: StepOutput<Step> })
        | (Step extends { kind: "fanOut"; steps: readonly (infer Member)[] } ? ResultEntries<Member, Optional> : never)
        | (Step extends { kind: "branch"; cases: infer Cases } ? ResultEntries<Cases[keyof Cases] extends readonly (infer Nested)[] ? Nested : never, true> : never)
        | (Step extends { kind: "branch"; otherwise?: readonly (infer Nested)[] } ? ResultEntries<Nested, true> : never)
  : never;

/** The ids of the top-level steps: `string` when the steps are not known one by one (then the results are untyped). */
type TopLevelIds<Steps extends readonly unknown[]> = Steps[number] extends infer Step ? (Step extends { id: infer Id extends string } ? Id : never) : never;

/**
 * The results `result(ctx)` sees: every step id of `Steps` (nested ones included) to its
 * result's type; the steps of a branch's cases are optional (only one case runs). Steps whose
 * ids are not literal types give untyped results (`any`).
 *
 * @example
 * ```ts
 * type Results = WorkflowResults<[CodeStep<any, "sum", number>]>; // { readonly sum: number }
 * ```
 */
export type WorkflowResults<Steps extends readonly unknown[]> = string extends TopLevelIds<Steps>
  ? any
  : UnionToIntersection<ResultEntries<Steps[number], false>> extends infer Results
    ? { [K in keyof Results]: Results[K] }
    : never;

/**
 * An agent step. In a workflow, `Input` and `Results` come from where the step stands (see {@link WorkflowBuilder}).
 * @example
 * agentStep({ id: "triage", agent: triage, input: (ctx) => ({ title: ctx.input.title }), retry: "safe" });
 */
export function agentStep<Input = any, const Id extends string = string, Agent extends TypedAgent<any, any> = TypedAgent<any, any>, Results = StepResults>(
  step: Omit<AgentStep<Input, Id, Agent, Results>, "kind">,
): AgentStep<Input, Id, Agent, Results> {
  return { ...step, kind: "agent" };
}

/**
 * A code step.
 * @example
 * codeStep({ id: "score", run: (ctx) => ctx.results.review.score * 2 });
 */
export function codeStep<Input = any, const Id extends string = string, Output = unknown, Results = StepResults>(step: Omit<CodeStep<Input, Id, Output, Results>, "kind">): CodeStep<Input, Id, Output, Results> {
  return { ...step, kind: "code" };
}

/**
 * An artifact step.
 * @example
 * artifactStep({ id: "report", path: "report.md", content: (ctx) => ctx.results.summary });
 */
export function artifactStep<Input = any, const Id extends string = string, Results = StepResults>(step: Omit<ArtifactStep<Input, Id, Results>, "kind">): ArtifactStep<Input, Id, Results> {
  return { ...step, kind: "artifact" };
}

/**
 * An approval step.
 * @example
 * approvalStep({ id: "publish", message: "Publish the report?" });
 */
export function approvalStep<Input = any, const Id extends string = string, Results = StepResults>(step: Omit<ApprovalStep<Input, Id, Results>, "kind">): ApprovalStep<Input, Id, Results> {
  return { ...step, kind: "approval" };
}

/**
 * A fan-out.
 * @example
 * fanOut({ id: "reviews", mode: "failFast", steps: [agentStep({ id: "style", agent: style }), agentStep({ id: "safety", agent: safety })] });
 */
export function fanOut<Input = any, const Id extends string = string, const Members extends readonly FanOutMember<any, any>[] = FanOutMember<Input>[]>(
  step: Omit<FanOutStep<Input, Id, Members>, "kind">,
): FanOutStep<Input, Id, Members> {
  return { ...step, kind: "fanOut" };
}

/**
 * A branch.
 * @example
 * branch({ id: "route", on: (ctx) => ctx.results.triage.label, cases: { bug: [agentStep({ id: "fix", agent: fixer })] }, otherwise: [] });
 */
export function branch<
  Input = any,
  const Id extends string = string,
  Results = StepResults,
  const Cases extends Record<string, readonly WorkflowStep<any, any>[]> = Record<string, WorkflowStep<Input, Results>[]>,
  const Otherwise extends readonly WorkflowStep<any, any>[] = [],
>(step: Omit<BranchStep<Input, Id, Cases, Otherwise, Results>, "kind">): BranchStep<Input, Id, Cases, Otherwise, Results> {
  return { ...step, kind: "branch" };
}

/** Every step of `steps`, nested ones included, in definition order, with its enclosing fan-out. */
export function flattenSteps(steps: readonly WorkflowStep<any, any>[], parent?: string): { step: WorkflowStep<any, any>; parent?: string }[] {
  return steps.flatMap((step) => {
    const self = [{ step, ...(parent !== undefined ? { parent } : {}) }];
    if (step.kind === "fanOut") return [...self, ...flattenSteps(step.steps, step.id)];
    if (step.kind === "branch") return [...self, ...Object.values(step.cases).flatMap((list) => flattenSteps(list, parent)), ...flattenSteps(step.otherwise ?? [], parent)];
    return self;
  });
}

/**
 * `defineWorkflow`: a typed workflow (zod input and output) of declared steps, compiled to an XState v5 machine and run and resumed from its own
 * stream `workflow-<id>`. The definition is checked at once (`WorkflowDefinitionError` naming the field); finished steps are never run again on
 * resume; the output is `result(ctx)` validated with `output`. Definitions hold no state.
 */
import type { z } from "zod";
import { WorkflowDefinitionError } from "./errors.ts";
import { compileWorkflowMachine } from "./machine.ts";
import { resumeWorkflow, startWorkflow, type WorkflowOutcome, type WorkflowRunOptions } from "./runner.ts";
import type { WorkflowContext, WorkflowResults, WorkflowStep } from "./steps.ts";
import type { WorkflowBuilder } from "./workflow-builder.ts";

/**
 * A workflow's definition.
 * @example
 * const options: DefineWorkflowOptions<z.ZodString, z.ZodString> = { name: "echo", input: z.string(), output: z.string(), steps: [codeStep({ id: "echo", run: (ctx) => ctx.input })] };
 */
export interface DefineWorkflowOptions<Input extends z.ZodType, Output extends z.ZodType, Steps extends readonly WorkflowStep<z.output<Input>>[] = WorkflowStep<z.output<Input>>[]> {
  /** `[A-Za-z][A-Za-z0-9_-]*`, at most 64 characters; in every event of its runs. */
  name: string;
  input: Input;
  output: Output;
  steps: Steps;
  /** The output from the results (default: the last top-level step's result); `ctx.results` is typed from the steps. */
  result?: (ctx: WorkflowContext<z.output<Input>, WorkflowResults<Steps>>) => z.input<Output> | Promise<z.input<Output>>;
}

/**
 * The compiled machine of a workflow, opaque in the public types (it is an xstate `StateMachine`).
 * @example
 * import type { AnyStateMachine } from "xstate";
 * const machine = workflow.machine as unknown as AnyStateMachine;
 */
export interface WorkflowMachine {
  /** The machine's id: the workflow's name. */
  readonly id: string;
}

/**
 * A defined workflow.
 * @example
 * const outcome = await workflow.run(input, { harness });
 */
export interface Workflow<Input extends z.ZodType = z.ZodType, Output extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly definition: Readonly<DefineWorkflowOptions<Input, Output, readonly WorkflowStep<z.output<Input>, any>[]>>;
  /**
   * The compiled XState machine (one state per step). Typed as {@link WorkflowMachine} so that the package's public declarations never load xstate's
   * own, which fail to type-check under `exactOptionalPropertyTypes` with `skipLibCheck: false`; cast it (`as AnyStateMachine`) to hand it to
   * `createActor`, `xstate/graph` or the inspector.
   */
  readonly machine: WorkflowMachine;
  /**
   * Starts a run (see `runner.ts`).
   * @throws (rejects) WorkflowRunError for input that fails the input schema (nothing logged).
   */
  run(input: z.input<Input>, options: WorkflowRunOptions): Promise<WorkflowOutcome<z.output<Output>>>;
  /**
   * Goes on with run `workflowId`: finished steps are replayed from the log.
   * @throws (rejects) WorkflowRunError for an unknown run, a run of another workflow, or one another live process drives.
   */
  resume(workflowId: string, options: WorkflowRunOptions): Promise<WorkflowOutcome<z.output<Output>>>;
}

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function check(options: DefineWorkflowOptions<z.ZodType, z.ZodType, readonly WorkflowStep<any, any>[]>): void {
  const fail = (field: string, what: string): never => {
    throw new WorkflowDefinitionError(`Invalid workflow option "${field}": ${what}`, field);
  };
  if (typeof options !== "object" || options === null) fail("(root)", "expected an object");
  if (typeof options.name !== "string" || !NAME.test(options.name)) fail("name", `${JSON.stringify(options.name)} is not a name ([A-Za-z][A-Za-z0-9_-]*, at most 64 characters)`);
  for (const field of ["input", "output"] as const) {
    if (typeof (options[field] as { safeParse?: unknown } | undefined)?.safeParse !== "function") fail(field, "expected a zod schema");
  }
  if (!Array.isArray(options.steps)) fail("steps", "expected an array of steps");
  const seen = new Set<string>();
  const walk = (steps: readonly WorkflowStep<any, any>[], path: string, inFanOut: boolean) =>
    steps.forEach((step, index) => {
      const at = `${path}[${index}]`;
      if (typeof step !== "object" || step === null) fail(at, "expected a step (agentStep, codeStep, fanOut, branch, approvalStep, artifactStep)");
      if (typeof step.id !== "string" || !NAME.test(step.id)) fail(`${at}.id`, `${JSON.stringify(step.id)} is not a step id ([A-Za-z][A-Za-z0-9_-]*, at most 64 characters)`);
      if (seen.has(step.id)) fail(`${at}.id`, `step id "${step.id}" is used twice`);
      seen.add(step.id);
      if ("retry" in step && step.retry !== undefined && step.retry !== "safe" && step.retry !== "never") fail(`${at}.retry`, `expected "safe" or "never", got ${JSON.stringify(step.retry)}`);
      if (inFanOut && !["agent", "code", "artifact", "approval"].includes(step.kind)) fail(`${at}.kind`, `a fan-out runs agent, code, artifact and approval steps, not "${step.kind}"`);
      if (step.kind === "agent" && typeof (step.agent as { run?: unknown } | undefined)?.run !== "function") fail(`${at}.agent`, "expected a defineAgent agent");
      else if (step.kind === "code" && typeof step.run !== "function") fail(`${at}.run`, "expected a function");
      else if (step.kind === "artifact" && (typeof step.content !== "function" || (typeof step.path !== "string" && typeof step.path !== "function"))) fail(`${at}`, "an artifact step needs path (string or function) and content (function)");
      else if (step.kind === "fanOut") {
        if (!Array.isArray(step.steps) || step.steps.length === 0) fail(`${at}.steps`, "a fan-out needs at least one step");
        if (step.mode !== undefined && step.mode !== "all" && step.mode !== "failFast") fail(`${at}.mode`, `expected "all" or "failFast", got ${JSON.stringify(step.mode)}`);
        walk(step.steps, `${at}.steps`, true);
      } else if (step.kind === "branch") {
        if (typeof step.on !== "function") fail(`${at}.on`, "expected a function");
        if (typeof step.cases !== "object" || step.cases === null || Object.keys(step.cases).length === 0) fail(`${at}.cases`, "a branch needs at least one case");
        for (const [name, list] of Object.entries(step.cases)) walk(list, `${at}.cases.${name}`, false);
        if (step.otherwise !== undefined) walk(step.otherwise, `${at}.otherwise`, false);
      } else if (!["agent", "code", "artifact", "approval"].includes(step.kind)) fail(`${at}.kind`, `unknown step kind ${JSON.stringify(step.kind)}`);
    });
  walk(options.steps, "steps", false);
}

/**
 * Defines a workflow (see the module contract): from `steps`, an array whose step functions see untyped `ctx.results`, or, without `steps`, a
 * {@link WorkflowBuilder} whose `.step()` types each step's `ctx.input` and `ctx.results` from the input schema and the steps before it.
 * @throws WorkflowDefinitionError naming the field of a bad definition (the builder form: from `build()`).
 * @example
 * const sum = defineWorkflow({ name: "sum", input: z.object({ a: z.number(), b: z.number() }), output: z.number(), steps: [codeStep({ id: "add", run: (ctx) => ctx.input.a + ctx.input.b })] });
 * const outcome = await sum.run({ a: 1, b: 2 }, { harness }); // { status: "done", output: 3, … }
 */
export function defineWorkflow<Input extends z.ZodType, Output extends z.ZodType, const Steps extends readonly WorkflowStep[]>(
  options: DefineWorkflowOptions<Input, Output, Steps>,
): Workflow<Input, Output>;
export function defineWorkflow<Input extends z.ZodType, Output extends z.ZodType>(options: Omit<DefineWorkflowOptions<Input, Output>, "steps" | "result">): WorkflowBuilder<Input, Output>;
export function defineWorkflow(options: DefineWorkflowOptions<any, any, readonly WorkflowStep<any, any>[]> | Omit<DefineWorkflowOptions<any, any>, "steps" | "result">): Workflow<any, any> | WorkflowBuilder<any, any, any> {
  if (typeof options === "object" && options !== null && !("steps" in options)) return builder(options, []);
  check(options);
  const definition = Object.freeze({ ...options });
  const runnable = { name: options.name, input: options.input, output: options.output, steps: options.steps, ...(options.result ? { result: options.result as (ctx: WorkflowContext) => unknown } : {}) };
  return {
    name: options.name,
    definition,
    machine: compileWorkflowMachine(runnable.steps, options.name),
    run: (input, runOptions) => startWorkflow(runnable, input, runOptions),
    resume: (workflowId, runOptions) => resumeWorkflow(runnable, workflowId, runOptions),
  };
}

function builder(base: Omit<DefineWorkflowOptions<z.ZodType, z.ZodType>, "steps" | "result">, steps: readonly WorkflowStep<any, any>[]): WorkflowBuilder<z.ZodType, z.ZodType, any> {
  return {
    step: (step) => builder(base, [...steps, step]),
    build: (result) => defineWorkflow({ ...base, steps, ...(result ? { result } : {}) }) as Workflow,
  };
}

/**
 * True for a value `defineWorkflow` returned (the CLI checks a module's default export).
 * @example
 * const workflow = (await import(file)).default; if (!isWorkflow(workflow)) throw new Error("not a workflow");
 */
export function isWorkflow(value: unknown): value is Workflow {
  return typeof value === "object" && value !== null && typeof (value as Workflow).run === "function" && typeof (value as Workflow).resume === "function" && typeof (value as Workflow).machine === "object";
}

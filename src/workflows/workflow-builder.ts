/**
 * The builder form of `defineWorkflow`: steps added one `.step()` at a time, each typed against the workflow's input and the results of the steps
 * before it, so a step that names a later step, a misspelt id or a field its result lacks fails to compile.
 */
import type { z } from "zod";
import type { Workflow } from "./define-workflow.ts";
import type { WorkflowContext, WorkflowResults, WorkflowStep } from "./steps.ts";

/** `A & B` as one object type (what an editor shows and `toEqualTypeOf` compares). */
type Merge<A, B> = A & B extends infer Both ? { [K in keyof Both]: Both[K] } : never;

/**
 * A workflow being defined step by step (`defineWorkflow({ name, input, output })` without `steps`). `Results` is what the next step's functions
 * see as `ctx.results`: every step added so far (nested ones included, a branch's optional) with its result's type, as {@link WorkflowResults}
 * computes it; `ctx.input` is the input schema's output type. A fan-out's members and a branch's `on` and case steps see the results of the steps
 * before the fan-out or branch. A step whose id is a `string` variable makes the results untyped from there on. Each call returns a new builder;
 * none is changed.
 * @example
 * const sum = defineWorkflow({ name: "sum", input: z.object({ a: z.number(), b: z.number() }), output: z.number() })
 *   .step(codeStep({ id: "add", run: (ctx) => ctx.input.a + ctx.input.b }))
 *   .step(codeStep({ id: "double", run: (ctx) => ctx.results.add * 2 }))
 *   .build((ctx) => ctx.results.double);
 */
export interface WorkflowBuilder<Input extends z.ZodType, Output extends z.ZodType, Results = {}> {
  /**
   * Adds `step` after the steps so far; its functions see `ctx.results` of those steps. (The parameter's union gives the step builders a concrete
   * contextual type, so `ctx` is typed before `Step` is inferred.)
   */
  step<Step extends WorkflowStep<z.output<Input>, Results>>(step: Step | WorkflowStep<z.output<Input>, Results>): WorkflowBuilder<Input, Output, Merge<Results, WorkflowResults<[Step]>>>;
  /**
   * The workflow, with `result` as its output (default: the last top-level step's result), checked as `defineWorkflow` checks the array form.
   * @throws WorkflowDefinitionError naming the field of a bad definition (`steps[1].id` used twice, …).
   */
  build(result?: (ctx: WorkflowContext<z.output<Input>, Results>) => z.input<Output> | Promise<z.input<Output>>): Workflow<Input, Output>;
}

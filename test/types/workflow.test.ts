/**
 * Type tests of workflow results: `result(ctx)` sees each step's result typed from the step (an
 * agent's output schema, a code step's return value, the fixed shapes of approval, artifact,
 * fan-out and branch steps), so a misspelt step id or field fails to compile (tsc over test/
 * fails if a `@ts-expect-error` stops erroring); the runtime half runs the workflow. In the
 * builder form each step's functions see the workflow's input and the results of the steps
 * before it, typed the same way.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../../src/agents/define-agent.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { scriptedModel } from "../../src/testing/index.ts";
import { defineWorkflow } from "../../src/workflows/define-workflow.ts";
import { WorkflowDefinitionError } from "../../src/workflows/errors.ts";
import { agentStep, approvalStep, artifactStep, branch, codeStep, fanOut, type ApprovalResult, type ArtifactResult, type CodeStep, type WorkflowResults } from "../../src/workflows/steps.ts";

const triage = defineAgent({ name: "triage", instructions: "Label it.", output: z.object({ label: z.enum(["bug", "feature"]), severity: z.number() }) });

describe("workflow results are typed from the steps", () => {
  it("result(ctx) sees each step id with its result's type", async () => {
    const sum = defineWorkflow({
      name: "sum",
      input: z.object({ a: z.number(), b: z.number() }),
      output: z.object({ total: z.number(), doubled: z.number(), parity: z.string() }),
      steps: [
        codeStep({ id: "one", run: (ctx): { total: number } => ({ total: ctx.input.a + ctx.input.b }) }),
        fanOut({ id: "both", steps: [codeStep({ id: "double", run: async (ctx) => ctx.results.one.total * 2 }), codeStep({ id: "label", run: () => "sum" })] }),
        branch({ id: "route", on: (ctx) => (ctx.results.one.total % 2 === 0 ? "even" : "odd"), cases: { even: [codeStep({ id: "even", run: () => true })], odd: [] } }),
      ],
      result: (ctx) => {
        expectTypeOf(ctx.results.one).toEqualTypeOf<{ total: number }>();
        expectTypeOf(ctx.results.double).toEqualTypeOf<number>();
        expectTypeOf(ctx.results.both).toEqualTypeOf<{ double: number; label: string }>();
        expectTypeOf(ctx.results.route).toEqualTypeOf<{ case: string }>();
        // A branch's steps may not have run.
        expectTypeOf(ctx.results.even).toEqualTypeOf<boolean | undefined>();
        return { total: ctx.results.one.total, doubled: ctx.results.both.double, parity: ctx.results.even ? "even" : "odd" };
      },
    });
    const harness = await createHarness({ models: { main: scriptedModel([]) }, eventLog: createMemoryEventLog() });
    const outcome = await sum.run({ a: 1, b: 3 }, { harness });
    expect(outcome).toMatchObject({ status: "done", output: { total: 4, doubled: 8, parity: "even" } });
    await harness.close();
  });

  it("refuses a step id or a field that is not there", () => {
    const make = () =>
      defineWorkflow({
        name: "typos",
        input: z.object({ title: z.string() }),
        output: z.string(),
        steps: [
          agentStep({ id: "triage", agent: triage, input: (ctx) => ctx.input.title }),
          approvalStep({ id: "ship" }),
          artifactStep({ id: "report", path: "r.md", content: () => "x" }),
        ],
        result: (ctx) => {
          expectTypeOf(ctx.results.triage).toEqualTypeOf<{ label: "bug" | "feature"; severity: number }>();
          expectTypeOf(ctx.results.ship).toEqualTypeOf<ApprovalResult>();
          expectTypeOf(ctx.results.report).toEqualTypeOf<ArtifactResult>();
          // @ts-expect-error `nope` is not a field of triage's output schema.
          const nope: unknown = ctx.results.triage.nope;
          // @ts-expect-error there is no step "tirage".
          const misspelt: unknown = ctx.results.tirage;
          // @ts-expect-error an approval's result has no `label`.
          const wrong: unknown = ctx.results.ship.label;
          return [nope, misspelt, wrong, ctx.results.triage.label].join();
        },
      });
    expect(typeof make).toBe("function");
  });

  it("falls back to untyped results when the step ids are not known until run time", () => {
    const id: string = "dynamic";
    expectTypeOf<WorkflowResults<[CodeStep<any, string, number>]>>().toBeAny();
    expectTypeOf<WorkflowResults<[CodeStep<any, "sum", number>]>>().toEqualTypeOf<{ readonly sum: number }>();
    const workflow = defineWorkflow({ name: "dynamic", input: z.string(), output: z.unknown(), steps: [codeStep({ id, run: () => 1 })], result: (ctx) => ctx.results.anything });
    expect(workflow.name).toBe("dynamic");
  });
});

describe("in the builder form, step functions see the input and the steps before them", () => {
  it("types ctx.input and ctx.results in every step function, and the runtime gives them", async () => {
    const seen: unknown[] = [];
    const sum = defineWorkflow({ name: "sum-built", input: z.object({ a: z.number(), b: z.number() }), output: z.object({ total: z.number(), doubled: z.number(), parity: z.string() }) })
      .step(
        codeStep({
          id: "one",
          run: (ctx): { total: number } => {
            expectTypeOf(ctx.input).toEqualTypeOf<{ a: number; b: number }>();
            expectTypeOf(ctx.results).toEqualTypeOf<{}>();
            return { total: ctx.input.a + ctx.input.b };
          },
        }),
      )
      .step(
        fanOut({
          id: "both",
          steps: [
            codeStep({
              id: "double",
              run: async (ctx) => {
                expectTypeOf(ctx.results).toEqualTypeOf<{ readonly one: { total: number } }>();
                return ctx.results.one.total * 2;
              },
            }),
            codeStep({ id: "label", run: (ctx) => `sum of ${ctx.input.a} and ${ctx.input.b}` }),
          ],
        }),
      )
      .step(
        branch({
          id: "route",
          on: (ctx) => {
            expectTypeOf(ctx.results.both).toEqualTypeOf<{ double: number; label: string }>();
            expectTypeOf(ctx.results.double).toEqualTypeOf<number>();
            return ctx.results.double % 4 === 0 ? "even" : "odd";
          },
          cases: { even: [codeStep({ id: "even", run: (ctx) => ctx.results.one.total % 2 === 0 })], odd: [] },
        }),
      )
      .step(
        codeStep({
          id: "after",
          run: (ctx) => {
            expectTypeOf(ctx.results.route).toEqualTypeOf<{ case: string }>();
            expectTypeOf(ctx.results.even).toEqualTypeOf<boolean | undefined>();
            seen.push(ctx.input, ctx.results.one, ctx.results.label, ctx.results.route, ctx.results.even);
            return ctx.results.even ?? false;
          },
        }),
      )
      .build((ctx) => {
        expectTypeOf(ctx.results.after).toEqualTypeOf<boolean>();
        return { total: ctx.results.one.total, doubled: ctx.results.both.double, parity: ctx.results.after ? "even" : "odd" };
      });
    const harness = await createHarness({ models: { main: scriptedModel([]) }, eventLog: createMemoryEventLog() });
    const outcome = await sum.run({ a: 1, b: 3 }, { harness });
    expect(outcome).toMatchObject({ status: "done", output: { total: 4, doubled: 8, parity: "even" } });
    expect(seen).toEqual([{ a: 1, b: 3 }, { total: 4 }, "sum of 1 and 3", { case: "even" }, true]);
    await harness.close();
  });

  it("refuses an unknown id, a later step, a wrong field and a wrong input field inside a step", () => {
    const make = () =>
      defineWorkflow({ name: "typos-built", input: z.object({ title: z.string() }), output: z.string() })
        .step(agentStep({ id: "triage", agent: triage, input: (ctx) => ctx.input.title }))
        .step(
          codeStep({
            id: "check",
            run: (ctx) => {
              expectTypeOf(ctx.results.triage).toEqualTypeOf<{ label: "bug" | "feature"; severity: number }>();
              // @ts-expect-error there is no step "tirage".
              const misspelt: unknown = ctx.results.tirage;
              // @ts-expect-error "report" runs after this step.
              const later: unknown = ctx.results.report;
              // @ts-expect-error `nope` is not a field of triage's output schema.
              const nope: unknown = ctx.results.triage.nope;
              // @ts-expect-error the input schema has no `body`.
              const body: unknown = ctx.input.body;
              return [misspelt, later, nope, body, ctx.results.triage.label].join();
            },
          }),
        )
        .step(approvalStep({ id: "ship", message: (ctx) => `Ship ${ctx.input.title} (${ctx.results.check})?` }))
        .step(
          artifactStep({
            id: "report",
            path: (ctx) => `${ctx.results.triage.label}.md`,
            // @ts-expect-error an approval's result has no `label`.
            content: (ctx) => `${ctx.results.ship.label}`,
          }),
        )
        .step(
          fanOut({
            id: "fan",
            steps: [
              // @ts-expect-error a fan-out's members do not see each other ("sibling" runs at the same time).
              codeStep({ id: "first", run: (ctx) => ctx.results.sibling }),
              codeStep({ id: "sibling", run: (ctx) => ctx.results.report.bytes }),
            ],
          }),
        )
        .build((ctx) => `${ctx.results.report.path} ${ctx.results.fan.sibling} ${ctx.results.sibling}`);
    expect(typeof make).toBe("function");
  });

  it("checks the definition at build(), and each builder stays as it was", async () => {
    const base = defineWorkflow({ name: "twice", input: z.number(), output: z.number() }).step(codeStep({ id: "one", run: (ctx) => ctx.input + 1 }));
    expect(() => base.step(codeStep({ id: "one", run: () => 2 })).build()).toThrow(WorkflowDefinitionError);
    const plusTen = base.step(codeStep({ id: "ten", run: (ctx) => ctx.results.one + 10 })).build();
    const plusOne = base.build();
    const harness = await createHarness({ models: { main: scriptedModel([]) }, eventLog: createMemoryEventLog() });
    expect(await plusTen.run(1, { harness })).toMatchObject({ status: "done", output: 12 });
    expect(await plusOne.run(1, { harness })).toMatchObject({ status: "done", output: 2 });
    await harness.close();
  });
});

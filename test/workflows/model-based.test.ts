/**
 * Model-based tests of the workflow machine (issue 13): every simple path from `xstate/graph`
 * through the compiled machine of a workflow holding each step kind (code, branch with an empty
 * and a non-empty case, a fan-out of two, an approval gate, the output) is EXECUTED against real
 * actors: the real runner, real code steps told by the path whether to succeed, a real log and
 * real approvals. Each run must end in the state the path names, with exactly the steps the path
 * finished logged as done, and the failing step the path names.
 */
import { describe, expect, it } from "vitest";
import { getSimplePaths } from "xstate/graph";
import type { AnyStateMachine } from "xstate";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { defineWorkflow } from "../../src/workflows/define-workflow.ts";
import { workflowStreamId } from "../../src/workflows/fold.ts";
import { decideWorkflowApproval } from "../../src/workflows/runs.ts";
import { approvalStep, branch, codeStep, fanOut } from "../../src/workflows/steps.ts";

type Plan = Record<string, "done" | "failed">;

function workflowFor(plan: Plan, choice: string, finishFails: boolean) {
  const code = (id: string) =>
    codeStep({
      id,
      run: () => {
        if (plan[id] === "failed") throw new Error(`${id} failed as planned`);
        return id.toUpperCase();
      },
    });
  return defineWorkflow({
    name: "shape",
    input: z.object({}),
    output: z.object({ a: z.string() }),
    steps: [
      code("a"),
      branch({ id: "b", on: () => choice, cases: { x: [code("c")], y: [] } }),
      fanOut({ id: "f", steps: [code("m1"), code("m2")] }),
      approvalStep({ id: "g" }),
    ],
    result: (ctx) => (finishFails ? { a: 1 } : { a: ctx.results.a }) as never,
  });
}

const done = (id: string, output: unknown = id.toUpperCase()) => ({ type: `xstate.done.actor.${id}`, output: { status: "done", output } });
const failed = (id: string) => ({ type: `xstate.done.actor.${id}`, output: { status: "failed", code: "WORKFLOW_STEP_FAILED", error: `${id} failed` } });
const EVENTS = [
  done("a"),
  failed("a"),
  done("b", { case: "x" }),
  done("b", { case: "y" }),
  done("c"),
  failed("c"),
  done("f:enter", {}),
  done("m1"),
  failed("m1"),
  done("m2"),
  failed("m2"),
  done("f:leave", {}),
  { type: "xstate.done.actor.f:leave", output: { status: "failed", code: "WORKFLOW_STEP_FAILED", error: "a member failed" } },
  done("g", { approved: true }),
  { type: "xstate.done.actor.g", output: { status: "suspended" } },
  done("finish", { a: "A" }),
  { type: "xstate.done.actor.finish", output: { status: "failed", code: "WORKFLOW_OUTPUT_INVALID", error: "bad output" } },
];

const machine = workflowFor({}, "x", false).machine as unknown as AnyStateMachine;
const paths = getSimplePaths(machine, {
  events: EVENTS,
  // A fan-out's leave fails exactly when one of its members failed (the runner's rule).
  filterEvents: (snapshot: any, event: any) => {
    if (!snapshot.can(event)) return false;
    if (event.type !== "xstate.done.actor.f:leave") return true;
    return (event.output.status === "failed") === (snapshot.context.failures.f?.length > 0);
  },
  serializeState: (snapshot: any) => JSON.stringify([snapshot.value, Object.keys(snapshot.context.results).sort(), snapshot.context.failures]),
} as never);

const terminal = paths.filter((path) => ["done", "failed", "suspended"].includes(String(path.state.value)));

describe("workflow machine: every simple path, executed", () => {
  it("reaches every final state and every step state", () => {
    expect(new Set(terminal.map((path) => String(path.state.value)))).toEqual(new Set(["done", "failed", "suspended"]));
    const visited = new Set(paths.flatMap((path) => path.steps.map((step) => JSON.stringify(step.state.value))));
    for (const state of ["a", "b", "f", "g", "finishing"]) expect([...visited].some((value) => value.includes(`"${state}"`) || value === `"${state}"`)).toBe(true);
    expect(terminal.length).toBeGreaterThan(15);
  });

  it.each(terminal.map((path) => [path.steps.map((step) => `${step.event.type.replace("xstate.done.actor.", "")}:${(step.event as any).output?.status ?? ""}`).join(" > "), path] as const))(
    "%s",
    async (_name, path) => {
      const events = path.steps.map((step) => step.event as any).filter((event) => event.type.startsWith("xstate.done.actor."));
      const plan: Plan = {};
      let choice = "x";
      let finishFails = false;
      let gate: "done" | "suspended" | undefined;
      for (const event of events) {
        const id = event.type.slice("xstate.done.actor.".length);
        if (id === "b" && event.output.status === "done") choice = event.output.output.case;
        else if (id === "finish") finishFails = event.output.status === "failed";
        else if (id === "g") gate = event.output.status;
        else if (!id.includes(":")) plan[id] = event.output.status;
      }
      const log = createMemoryEventLog();
      const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "unused", baseURL: "http://127.0.0.1:9/v1", apiKey: "unused" }) } });
      try {
        const workflow = workflowFor(plan, choice, finishFails);
        let outcome = await workflow.run({}, { harness, workflowId: "w" });
        if (gate === "done") {
          expect(outcome).toMatchObject({ status: "suspended", pendingApprovals: ["g"] });
          await decideWorkflowApproval(log, "w", "g", { status: "approved" });
          outcome = await workflow.resume("w", { harness });
        }
        const target = String(path.state.value);
        expect(outcome.status).toBe(target);
        const logged = await log.readStream(workflowStreamId("w"));
        const doneSteps = logged.flatMap((event) => (isEventOfType(event, "step.ended") && event.data.status === "done" ? [event.data.stepId] : []));
        const expected = events.filter((event) => event.output.status === "done").map((event) => event.type.slice("xstate.done.actor.".length)).filter((id) => id !== "finish" && id !== "f:enter").map((id) => (id === "f:leave" ? "f" : id));
        expect(doneSteps.sort()).toEqual(expected.sort());
        if (outcome.status === "failed") {
          // The step that failed the run: the last failure (a member's failure fails its fan-out).
          const failing = events.filter((event) => event.output.status === "failed").at(-1);
          const id = failing.type.slice("xstate.done.actor.".length);
          expect(outcome.error.stepId).toBe(id === "finish" ? undefined : id === "f:leave" ? "f" : id);
        }
      } finally {
        await harness.close();
      }
    },
  );
});

/**
 * An approval step inside a fan-out (issue 13): it waits while its siblings run; once they
 * settled the run is `suspended` naming it; after the decision a resume replays the siblings (they
 * do not run again) and leaves the fan-out with every member's result. A denial fails the fan-out
 * (or gives `{ approved: false }` with `onDeny: "continue"`); a sibling that fails closes the
 * waiting approval with the failed run. Real SQLite files.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../../src/agents/define-agent.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { defineWorkflow } from "../../src/workflows/define-workflow.ts";
import { workflowStreamId } from "../../src/workflows/fold.ts";
import { decideWorkflowApproval, readWorkflowRun } from "../../src/workflows/runs.ts";
import { agentStep, approvalStep, codeStep, fanOut, type FanOutMember } from "../../src/workflows/steps.ts";

let dir: string;
let log: EventLog;
let harness: AgentHarness;
let ran: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "arbor-wf-fanout-approval-"));
  log = createSqliteEventLog({ path: join(dir, "arbor.db") });
  harness = await createHarness({ eventLog: log, cwd: dir, models: { main: scriptedModel([]) } });
  ran = [];
});
afterEach(async () => {
  await harness.close();
  await log.close();
  rmSync(dir, { recursive: true, force: true });
});

const code = (id: string, fails = false) =>
  codeStep({
    id,
    run: () => {
      ran.push(id);
      if (fails) throw new Error(`${id} broke`);
      return `${id}-ok`;
    },
  });
const release = (members: FanOutMember[], mode: "all" | "failFast" = "all") =>
  defineWorkflow({
    name: "release",
    input: z.object({ version: z.string() }),
    output: z.unknown(),
    steps: [code("build"), fanOut({ id: "checks", mode, steps: members }), code("publish")],
    result: (ctx) => ({ checks: ctx.results.checks, publish: ctx.results.publish }),
  });
const stepEvents = async (id: string) =>
  (await log.readStream(workflowStreamId(id))).flatMap((event) => (isEventOfType(event, "step.started", "step.ended") ? [`${event.type}:${event.data.stepId}`] : isEventOfType(event, "approval.requested", "approval.ended", "workflow.ended") ? [event.type] : []));

describe("an approval step inside a fan-out", () => {
  it("waits while its siblings run, suspends once they settled, and after approval leaves the fan-out without running them again", async () => {
    const workflow = release([code("lint"), approvalStep({ id: "signoff", message: "Sign off the release?" }), code("test")]);
    const first = await workflow.run({ version: "1.2.0" }, { harness, cwd: dir });
    expect(first).toMatchObject({ status: "suspended", pendingApprovals: ["signoff"] });
    expect(ran.sort()).toEqual(["build", "lint", "test"]);
    expect((await readWorkflowRun(log, first.workflowId))?.status).toBe("awaiting-approval");
    const before = await stepEvents(first.workflowId);
    expect(before).toContain("step.ended:lint");
    expect(before).toContain("step.ended:test");
    expect(before).not.toContain("step.ended:checks");
    expect(before).not.toContain("step.started:publish");

    // Resumed before a decision: still waiting, nothing runs again.
    expect(await workflow.resume(first.workflowId, { harness, cwd: dir })).toMatchObject({ status: "suspended", pendingApprovals: ["signoff"] });
    expect(ran.sort()).toEqual(["build", "lint", "test"]);

    await decideWorkflowApproval(log, first.workflowId, "signoff", { status: "approved", reason: "looks good" });
    const done = await workflow.resume(first.workflowId, { harness, cwd: dir });
    expect(done).toEqual({
      status: "done",
      workflowId: first.workflowId,
      output: { checks: { lint: "lint-ok", signoff: { approved: true, reason: "looks good" }, test: "test-ok" }, publish: "publish-ok" },
    });
    expect(ran.sort()).toEqual(["build", "lint", "publish", "test"]);
    const events = await stepEvents(first.workflowId);
    for (const stepId of ["build", "checks", "lint", "signoff", "test", "publish"]) {
      expect(events.filter((type) => type === `step.started:${stepId}`), stepId).toHaveLength(1);
      expect(events.filter((type) => type === `step.ended:${stepId}`), stepId).toHaveLength(1);
    }
    expect(events.filter((type) => type === "approval.requested")).toHaveLength(1);
  });

  it("a denial fails the fan-out naming the step; with onDeny continue the result says approved false", async () => {
    const failing = release([code("lint"), approvalStep({ id: "signoff" })]);
    const first = await failing.run({ version: "1" }, { harness, cwd: dir });
    await decideWorkflowApproval(log, first.workflowId, "signoff", { status: "denied", reason: "freeze" });
    const failed = await failing.resume(first.workflowId, { harness, cwd: dir });
    expect(failed).toMatchObject({ status: "failed", error: { stepId: "checks", message: expect.stringContaining('signoff: step "signoff" was denied: freeze') } });
    expect(ran).not.toContain("publish");

    const lenient = release([code("lint2"), approvalStep({ id: "signoff2", onDeny: "continue" })]);
    const second = await lenient.run({ version: "2" }, { harness, cwd: dir });
    await decideWorkflowApproval(log, second.workflowId, "signoff2", { status: "denied", reason: "later" });
    expect(await lenient.resume(second.workflowId, { harness, cwd: dir })).toMatchObject({ status: "done", output: { checks: { lint2: "lint2-ok", signoff2: { approved: false, reason: "later" } } } });
  });

  it("a sibling that fails fails the run at once and closes the waiting approval", async () => {
    for (const mode of ["all", "failFast"] as const) {
      const workflow = release([approvalStep({ id: `signoff-${mode}` }), code(`broken-${mode}`, true)], mode);
      const outcome = await workflow.run({ version: "1" }, { harness, cwd: dir });
      expect(outcome, mode).toMatchObject({ status: "failed", error: { stepId: "checks", message: expect.stringContaining(`broken-${mode} broke`) } });
      const stored = await log.readStream(workflowStreamId(outcome.workflowId));
      const closed = stored.filter((event) => isEventOfType(event, "approval.ended")).map((event) => event.data);
      expect(closed, mode).toEqual([{ toolCallId: `signoff-${mode}`, toolName: "release", status: "cancelled", reason: expect.stringContaining("the workflow failed") }]);
      expect((await readWorkflowRun(log, outcome.workflowId))?.status, mode).toBe("failed");
    }
  });
});

describe("an agent step whose tool needs approval", () => {
  it("fails the step with WORKFLOW_AGENT_SUSPENDED naming the waiting call and the agent's session; the tool did not run", async () => {
    await harness.close();
    harness = await createHarness({ eventLog: log, cwd: dir, models: { main: scriptedModel([{ toolCalls: [{ id: "call_deploy", name: "deploy", arguments: {} }] }]) } });
    const deploy = defineTool({ name: "deploy", description: "Deploys", parameters: z.object({}), needsApproval: true, execute: async () => (ran.push("deploy"), { content: [] }) });
    const deployer = defineAgent({ name: "deployer", instructions: "Deploy.", tools: [deploy] });
    const workflow = defineWorkflow({ name: "ship", input: z.string(), output: z.unknown(), steps: [agentStep({ id: "deploy-step", agent: deployer })] });
    const outcome = await workflow.run("go", { harness, cwd: dir });
    expect(outcome).toMatchObject({ status: "failed", error: { reason: "WORKFLOW_AGENT_SUSPENDED", stepId: "deploy-step", message: expect.stringMatching(/stopped for tool approval \(call_deploy\) in session \S+/) } });
    expect(ran).toEqual([]);
  });
});

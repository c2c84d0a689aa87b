/**
 * Workflows in one process: a real SQLite log, the real @ai-sdk/openai client against the
 * loopback OpenAI server. The review workflow runs to its approval gate (suspended), is approved
 * from the log, resumed, and ends with the typed output; every step is logged once; agents run in
 * their own sessions linked to the workflow. Also: denial, abort (running agents aborted, the
 * pending approval closed), a step interrupted and not safe to retry, branches, fail-fast fan-outs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { defineWorkflow } from "../../src/workflows/define-workflow.ts";
import { WorkflowDefinitionError, WorkflowRunError } from "../../src/workflows/errors.ts";
import { workflowStreamId } from "../../src/workflows/fold.ts";
import { abortWorkflowRun, decideWorkflowApproval, listWorkflowRuns, readWorkflowRun } from "../../src/workflows/runs.ts";
import { branch, codeStep, fanOut } from "../../src/workflows/steps.ts";
import { respond, reviewWorkflow } from "./fixtures/review-workflow.ts";

let dir: string;
let server: OpenAIServer;
let log: EventLog;
let harness: AgentHarness;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "arbor-workflows-"));
  server = await startOpenAIServer({ respond });
  log = createSqliteEventLog({ path: join(dir, "arbor.db") });
  harness = await createHarness({ eventLog: log, cwd: dir, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) }, retry: { maxRetries: 0 } });
});
afterEach(async () => {
  await harness.close();
  await log.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const types = async (id: string) => (await log.readStream(workflowStreamId(id))).map((event) => (isEventOfType(event, "step.started", "step.ended") ? `${event.type}:${event.data.stepId}` : event.type));

describe("defineWorkflow", () => {
  it("runs to the approval gate, resumes after the decision, and ends with the typed output", async () => {
    const counter = join(dir, "counter");
    const workflow = reviewWorkflow(counter);
    const first = await workflow.run({ title: "Crash on start" }, { harness, cwd: dir });
    expect(first.status).toBe("suspended");
    if (first.status !== "suspended") return;
    expect(first.pendingApprovals).toEqual(["ship"]);
    expect((await readWorkflowRun(log, first.workflowId))?.status).toBe("awaiting-approval");
    expect(await workflow.resume(first.workflowId, { harness, cwd: dir })).toMatchObject({ status: "suspended", pendingApprovals: ["ship"] });

    expect(await decideWorkflowApproval(log, first.workflowId, "ship", { status: "approved", reason: "fine" })).toEqual({ stepId: "ship", status: "approved", changed: true });
    expect((await decideWorkflowApproval(log, first.workflowId, "ship", { status: "approved" })).changed).toBe(false);
    await expect(decideWorkflowApproval(log, first.workflowId, "ship", { status: "denied" })).rejects.toMatchObject({ code: "APPROVAL_CONFLICT" });
    await expect(decideWorkflowApproval(log, first.workflowId, "nope", { status: "denied" })).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });

    const done = await workflow.resume(first.workflowId, { harness, cwd: dir });
    expect(done).toMatchObject({ status: "done", output: { triage: "triage-ok", style: "style-ok", safety: "safety-ok", approved: true } });
    expect(readFileSync(join(dir, "report.txt"), "utf8")).toBe("triage-ok/style-ok/safety-ok\n");
    expect(readFileSync(counter, "utf8").trim().split("\n").sort()).toEqual(["safety", "style", "triage"]);

    const events = await types(first.workflowId);
    expect(events[0]).toBe("workflow.started");
    expect(events.at(-1)).toBe("workflow.ended");
    for (const stepId of ["triage", "reviews", "style", "safety", "ship", "report"]) {
      expect(events.filter((type) => type === `step.started:${stepId}`)).toHaveLength(1);
      expect(events.filter((type) => type === `step.ended:${stepId}`)).toHaveLength(1);
    }
    // Each agent ran in its own session, linked both ways.
    const stored = await log.readStream(workflowStreamId(first.workflowId));
    const sessions = stored.flatMap((event) => (isEventOfType(event, "step.updated") ? [event.data.sessionId] : []));
    expect(sessions).toHaveLength(3);
    for (const sessionId of sessions) {
      const created = (await log.readStream(sessionStreamId(sessionId)))[0];
      expect(created.data).toMatchObject({ metadata: { workflowId: first.workflowId } });
    }
    // A finished run is not driven again.
    expect(await workflow.resume(first.workflowId, { harness, cwd: dir })).toMatchObject({ status: "done" });
    expect((await types(first.workflowId)).length).toBe(events.length);
    expect((await listWorkflowRuns(log)).map((run) => [run.workflowId, run.status])).toEqual([[first.workflowId, "done"]]);
  });

  it("fails on a denial with the reason, and the denial is one event", async () => {
    const workflow = reviewWorkflow(join(dir, "counter"));
    const first = await workflow.run({ title: "t" }, { harness, cwd: dir });
    await decideWorkflowApproval(log, first.workflowId, "ship", { status: "denied", reason: "freeze" });
    const ended = await workflow.resume(first.workflowId, { harness, cwd: dir });
    expect(ended.status).toBe("failed");
    if (ended.status === "failed") expect(ended.error).toMatchObject({ reason: "WORKFLOW_APPROVAL_DENIED", stepId: "ship", message: expect.stringContaining("freeze") });
    expect(existsSync(join(dir, "report.txt"))).toBe(false);
  });

  it("abort: a suspended run's approval is closed and the run ends aborted; a running agent is aborted", async () => {
    const workflow = reviewWorkflow(join(dir, "counter"));
    const first = await workflow.run({ title: "t" }, { harness, cwd: dir });
    const aborted = await abortWorkflowRun(log, first.workflowId, "superseded");
    expect(aborted.status).toBe("aborted");
    expect(aborted.gates.get("ship")?.status).toBe("cancelled");
    await expect(decideWorkflowApproval(log, first.workflowId, "ship", { status: "approved" })).rejects.toMatchObject({ code: "APPROVAL_CONFLICT" });

    let release!: () => void;
    const started = new Promise<void>((resolve) => (release = resolve));
    const slow = defineWorkflow({
      name: "slow",
      input: z.object({}),
      output: z.unknown(),
      steps: [
        codeStep({
          id: "wait",
          run: (_ctx, { signal }) =>
            new Promise((_, reject) => {
              release();
              signal.addEventListener("abort", () => reject(new Error("stopped")));
            }),
        }),
      ],
    });
    const controller = new AbortController();
    const running = slow.run({}, { harness, signal: controller.signal });
    await started;
    controller.abort(new Error("user cancel"));
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "aborted", reason: "user cancel" });
    const events = await log.readStream(workflowStreamId(outcome.workflowId));
    expect(events.map((event) => event.type)).toEqual(["workflow.started", "step.started", "step.ended", "workflow.ended"]);
    expect(events[2].data).toMatchObject({ status: "aborted" });
  });

  it("a step cut off by a crash and not safe to retry ends interrupted; a safe one runs again", async () => {
    let runs = 0;
    const make = (retry: "safe" | "never") =>
      defineWorkflow({ name: `cut-${retry}`, input: z.object({}), output: z.number(), steps: [codeStep({ id: "once", retry, run: () => ++runs })] });
    for (const retry of ["never", "safe"] as const) {
      const workflow = make(retry);
      const id = `cut-${retry}`;
      // A crashed attempt: workflow.started and step.started by a process that is gone.
      const dead = { pid: 2 ** 22 + 17, host: (await import("node:os")).hostname() };
      await log.append(workflowStreamId(id), [
        { type: "workflow.started", data: { workflowId: id, workflow: `cut-${retry}`, input: {}, steps: ["once"] }, metadata: { owner: dead } },
        { type: "step.started", data: { workflowId: id, stepId: "once", kind: "code", attempt: 1 }, metadata: { owner: dead } },
      ]);
      expect((await readWorkflowRun(log, id))?.status).toBe("interrupted");
      const outcome = await workflow.resume(id, { harness });
      if (retry === "never") {
        expect(outcome).toMatchObject({ status: "failed", error: { reason: "WORKFLOW_STEP_INTERRUPTED", stepId: "once" } });
        expect(runs).toBe(0);
      } else {
        expect(outcome).toMatchObject({ status: "done", output: 1 });
        const ended = (await log.readStream(workflowStreamId(id))).find((event) => event.type === "step.ended");
        expect(ended?.data).toMatchObject({ attempt: 2, status: "done" });
      }
    }
  });

  it("branches on a value and fails fast in a fan-out", async () => {
    const seen: string[] = [];
    const workflow = defineWorkflow({
      name: "route",
      input: z.object({ kind: z.string() }),
      output: z.unknown(),
      steps: [
        branch({
          id: "route",
          on: (ctx) => ctx.input.kind,
          cases: { bug: [codeStep({ id: "fix", run: () => (seen.push("fix"), "fixed") })], idea: [] },
          otherwise: [codeStep({ id: "file", run: () => (seen.push("file"), "filed") })],
        }),
        fanOut({
          id: "checks",
          mode: "failFast",
          steps: [
            codeStep({ id: "bad", run: async () => { throw new Error("check failed"); } }),
            codeStep({ id: "hang", run: (_ctx, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve("late"))) }),
          ],
        }),
      ],
    });
    const outcome = await workflow.run({ kind: "bug" }, { harness });
    expect(seen).toEqual(["fix"]);
    expect(outcome).toMatchObject({ status: "failed", error: { reason: "WORKFLOW_STEP_FAILED", stepId: "checks", message: expect.stringContaining("check failed") } });
    const ended = (await log.readStream(workflowStreamId(outcome.workflowId))).filter((event) => isEventOfType(event, "step.ended")).map((event) => [event.data.stepId, event.data.status]);
    expect(ended).toEqual(expect.arrayContaining([["route", "done"], ["fix", "done"], ["bad", "failed"], ["hang", "aborted"], ["checks", "failed"]]));
    expect((await workflow.run({ kind: "other" }, { harness })).status).toBe("failed");
    expect(seen).toEqual(["fix", "file"]);
  });

  it("refuses bad definitions and bad input, naming the field", async () => {
    expect(() => defineWorkflow({ name: "w", input: z.object({}), output: z.unknown(), steps: [codeStep({ id: "a", run: () => 1 }), codeStep({ id: "a", run: () => 2 })] })).toThrow(/steps\[1\]\.id.*used twice/);
    expect(() => defineWorkflow({ name: "w", input: z.object({}), output: z.unknown(), steps: [fanOut({ id: "f", steps: [branch({ id: "x", on: () => "a", cases: { a: [] } }) as never] })] })).toThrow(WorkflowDefinitionError);
    const workflow = defineWorkflow({ name: "w", input: z.object({ n: z.number() }), output: z.number(), steps: [codeStep({ id: "a", run: (ctx) => ctx.input.n })] });
    await expect(workflow.run({ n: "x" } as never, { harness })).rejects.toThrow(WorkflowRunError);
    await expect(workflow.resume("missing", { harness })).rejects.toThrow(/No workflow run "missing"/);
    expect((await listWorkflowRuns(log)).length).toBe(0);
  });
});

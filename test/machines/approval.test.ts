/**
 * Durable tool approval in one process (issue 13 item 1): a gated call logs
 * `approval.requested` and does not run, its siblings do, the run ends `suspended` and the
 * slot is `awaiting-approval`; decisions are idempotent and typed; continue() runs approved
 * calls once and gives denied ones a "declined" result; abort() closes waiting calls; a
 * reopened session is awaiting approval, not interrupted. Real sessions over SQLite files.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ApprovalConflictError, ApprovalNotFoundError, ApprovalPendingError, SessionBusyError } from "../../src/core/errors.ts";
import type { ToolResultMessage } from "../../src/core/messages.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import type { Agent } from "../../src/machines/agent-types.ts";
import { inputDigest } from "../../src/machines/approval-fold.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { recoverSession } from "../../src/machines/recovery.ts";
import { appendUnfinishedRun, fakeModel, sessionEvents, sqliteSession, type FakeStep } from "./helpers.ts";

const disposers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

function countingTool(name: string, options: { needsApproval?: boolean | ((args: { text: string }) => boolean | Promise<boolean>); sequential?: boolean } = {}) {
  const runs: string[] = [];
  const tool = defineTool({
    name,
    description: `${name} tool`,
    parameters: z.object({ text: z.string() }),
    ...(options.needsApproval !== undefined ? { needsApproval: options.needsApproval } : {}),
    ...(options.sequential ? { executionMode: "sequential" as const } : {}),
    async execute(args) {
      runs.push(args.text);
      return { content: [{ type: "text", text: `${name} ran ${args.text}` }] };
    },
  });
  return { tool, runs };
}

const twoCalls: FakeStep = {
  toolCalls: [
    { id: "call_danger", name: "danger", arguments: { text: "rm" } },
    { id: "call_safe", name: "safe", arguments: { text: "ls" } },
  ],
};

async function setup(steps: FakeStep[], options: { danger?: Parameters<typeof countingTool>[1]; requireApproval?: string[] | "all"; toolExecution?: "sequential" } = {}) {
  const { log, repo, session, path } = await sqliteSession();
  disposers.push(() => log.close());
  const danger = countingTool("danger", options.danger ?? { needsApproval: true });
  const safe = countingTool("safe");
  const model = fakeModel(steps);
  const agent = createAgent({
    session,
    model,
    tools: [danger.tool, safe.tool],
    ...(options.requireApproval ? { requireApproval: options.requireApproval } : {}),
    ...(options.toolExecution ? { toolExecution: options.toolExecution } : {}),
  });
  disposers.push(() => agent.dispose());
  return { log, repo, session, path, agent, model, danger, safe };
}

function toolResults(messages: { role: string }[]): ToolResultMessage[] {
  return messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
}

async function types(agent: Agent, log: { readStream(id: string): Promise<{ type: string; data: unknown }[]> }) {
  return (await sessionEvents(log as never, agent.sessionId)).map((event) => event.type);
}

describe("durable tool approval (one process)", () => {
  it("gates the call, runs its sibling, suspends; approve + continue runs it exactly once and pairs every call with one result", async () => {
    const { agent, model, danger, safe, log, session } = await setup([twoCalls, { text: "done" }]);
    const first = await agent.prompt("clean up");
    expect(first.status).toBe("suspended");
    expect(first.pendingApprovals).toEqual(["call_danger"]);
    expect(safe.runs).toEqual(["ls"]);
    expect(danger.runs).toEqual([]);
    expect(agent.operation()).toBe("awaiting-approval");
    const requested = (await sessionEvents(log, session.id)).filter((event) => isEventOfType(event, "approval.requested"));
    expect(requested.map((event) => event.data)).toEqual([
      { runId: first.runId, toolCallId: "call_danger", toolName: "danger", inputDigest: inputDigest({ text: "rm" }), source: "tool" },
    ]);
    // No tool input in the request event.
    expect(JSON.stringify(requested)).not.toContain('"rm"');

    expect(() => agent.prompt("something else")).toThrow(SessionBusyError);
    await expect(agent.continue()).rejects.toSatisfy(ApprovalPendingError.isInstance);
    expect(agent.operation()).toBe("awaiting-approval");
    const pending = await agent.pendingApprovals();
    expect(pending.map(({ toolCallId, status, input }) => ({ toolCallId, status, input }))).toEqual([{ toolCallId: "call_danger", status: "pending", input: { text: "rm" } }]);

    await expect(agent.approve("call_nope")).rejects.toSatisfy(ApprovalNotFoundError.isInstance);
    expect(await agent.approve("call_danger", { reason: "fine" })).toEqual({ toolCallId: "call_danger", status: "approved", changed: true, undecided: [] });
    expect(await agent.approve("call_danger")).toMatchObject({ changed: false });
    await expect(agent.deny("call_danger", { reason: "changed my mind" })).rejects.toSatisfy(ApprovalConflictError.isInstance);
    expect(model.calls).toBe(1);

    const second = await agent.continue();
    expect(second.status).toBe("done");
    expect(danger.runs).toEqual(["rm"]);
    expect(safe.runs).toEqual(["ls"]);
    await expect(agent.approve("call_danger")).rejects.toSatisfy(ApprovalConflictError.isInstance);
    expect(agent.operation()).toBe("idle");

    // The second model request pairs both calls with exactly one result each.
    const results = toolResults(model.requests[1].messages);
    expect(results.map((result) => result.toolCallId).sort()).toEqual(["call_danger", "call_safe"]);
    const events = await sessionEvents(log, session.id);
    const started = events.filter((event) => isEventOfType(event, "tool.started")).map((event) => (event.data as { toolCallId: string }).toolCallId);
    const ended = events.filter((event) => isEventOfType(event, "tool.ended")).map((event) => (event.data as { toolCallId: string }).toolCallId);
    expect(started.sort()).toEqual(["call_danger", "call_safe"]);
    expect(ended.sort()).toEqual(["call_danger", "call_safe"]);
    const runKinds = events.filter((event) => isEventOfType(event, "run.started")).map((event) => (event.data as { kind: string }).kind);
    expect(runKinds).toEqual(["prompt", "resume"]);
    const runEnds = events.filter((event) => isEventOfType(event, "run.ended")).map((event) => (event.data as { status: string }).status);
    expect(runEnds).toEqual(["suspended", "done"]);
  });

  it("after approve + continue, the resumed run's later tool calls run as in any run (each paired with its result), also a gated one", async () => {
    const later: FakeStep = { toolCalls: [{ id: "call_later", name: "safe", arguments: { text: "pwd" } }] };
    const gatedAgain: FakeStep = { toolCalls: [{ id: "call_danger_2", name: "danger", arguments: { text: "rm -r" } }] };
    const { agent, model, danger, safe, log, session } = await setup([twoCalls, later, gatedAgain, { text: "done" }]);
    expect((await agent.prompt("clean up")).status).toBe("suspended");
    await agent.approve("call_danger");
    const second = await agent.continue();
    // The resumed run ran the approved call, then the next message's call, then stopped at the new gated one.
    expect(danger.runs).toEqual(["rm"]);
    expect(safe.runs).toEqual(["ls", "pwd"]);
    expect(second).toMatchObject({ status: "suspended", pendingApprovals: ["call_danger_2"] });
    expect(toolResults(model.requests[2].messages).map((result) => result.toolCallId).sort()).toEqual(["call_danger", "call_later", "call_safe"]);
    await agent.approve("call_danger_2");
    expect((await agent.continue()).status).toBe("done");
    expect(danger.runs).toEqual(["rm", "rm -r"]);
    const events = await sessionEvents(log, session.id);
    const ended = events.filter((event) => isEventOfType(event, "tool.ended")).map((event) => (event.data as { toolCallId: string }).toolCallId);
    expect(ended.sort()).toEqual(["call_danger", "call_danger_2", "call_later", "call_safe"]);
    expect(toolResults(model.requests[3].messages).map((result) => result.toolCallId).sort()).toEqual(["call_danger", "call_danger_2", "call_later", "call_safe"]);
  });

  it("an agent waiting in this process sees what another connection to the file decided and resumed: pendingApprovals(), the slot, a conflicting decision", async () => {
    const { agent, danger, path } = await setup([twoCalls, { text: "done" }]);
    expect((await agent.prompt("clean up")).status).toBe("suspended");
    // Another writer of the same SQLite file (as another process would be) approves and resumes.
    const otherLog = createSqliteEventLog({ path });
    disposers.push(() => otherLog.close());
    const other = createAgent({ session: await createSessionRepository({ log: otherLog }).open(agent.sessionId), model: fakeModel([{ text: "done elsewhere" }]), tools: [countingTool("danger", { needsApproval: true }).tool, countingTool("safe").tool] });
    disposers.push(() => other.dispose());
    await other.approve("call_danger");

    // Here: the decision is seen, and a conflicting one is refused as such (not as a lost write race).
    expect((await agent.pendingApprovals()).map(({ toolCallId, status }) => ({ toolCallId, status }))).toEqual([{ toolCallId: "call_danger", status: "approved" }]);
    await expect(agent.deny("call_danger")).rejects.toSatisfy(ApprovalConflictError.isInstance);

    expect((await other.continue()).status).toBe("done");
    expect(agent.operation()).toBe("awaiting-approval"); // not told yet: it has not looked
    expect(await agent.pendingApprovals()).toEqual([]);
    expect(agent.operation()).toBe("idle");
    expect(agent.getState()).toMatchObject({ status: "idle", operation: "idle" });
    expect(danger.runs).toEqual([]); // it ran in the other agent, once
  });

  it("deny: the model gets an error result saying the user declined, with the reason; the tool never runs", async () => {
    const { agent, model, danger } = await setup([twoCalls, { text: "ok, not deleting" }]);
    await agent.prompt("clean up");
    expect(await agent.deny("call_danger", { reason: "not on the main branch" })).toMatchObject({ status: "denied", changed: true });
    expect(await agent.deny("call_danger", { reason: "not on the main branch" })).toMatchObject({ changed: false });
    await expect(agent.approve("call_danger")).rejects.toSatisfy(ApprovalConflictError.isInstance);
    const outcome = await agent.continue();
    expect(outcome.status).toBe("done");
    expect(danger.runs).toEqual([]);
    const denied = toolResults(model.requests[1].messages).find((result) => result.toolCallId === "call_danger")!;
    expect(denied.isError).toBe(true);
    expect(denied.content).toEqual([{ type: "text", text: expect.stringMatching(/user declined.*not on the main branch/) }]);
  });

  it("abort while waiting closes every waiting call with a result and frees the slot", async () => {
    const { agent, model, danger, log, session } = await setup([twoCalls, { text: "after" }]);
    await agent.prompt("clean up");
    agent.abort("user pressed stop");
    await agent.waitForIdle();
    expect(agent.operation()).toBe("idle");
    expect(danger.runs).toEqual([]);
    const events = await sessionEvents(log, session.id);
    const ended = events.filter((event) => isEventOfType(event, "approval.ended")).map((event) => event.data);
    expect(ended).toEqual([{ toolCallId: "call_danger", toolName: "danger", status: "cancelled", reason: "user pressed stop" }]);
    expect(events.filter((event) => isEventOfType(event, "run.ended")).map((event) => (event.data as { status: string }).status)).toEqual(["suspended", "aborted"]);
    expect(model.calls).toBe(1);
    // The next prompt sends a context where every call has one result.
    await agent.prompt("next");
    const results = toolResults(model.requests[1].messages);
    expect(results.map((result) => result.toolCallId).sort()).toEqual(["call_danger", "call_safe"]);
    expect(results.find((result) => result.toolCallId === "call_danger")!.content[0]).toMatchObject({ text: expect.stringContaining("waiting for the user's approval") });
  });

  it("a session reopened in a new agent is awaiting approval (not interrupted); the decision and resume work there", async () => {
    const { agent, danger, path, session } = await setup([twoCalls]);
    await agent.prompt("clean up");
    await agent.dispose();
    const log = createSqliteEventLog({ path });
    disposers.push(() => log.close());
    const reopened = await createSessionRepository({ log }).open(session.id);
    const model = fakeModel([{ text: "done" }]);
    const again = createAgent({ session: reopened, model, tools: [danger.tool] });
    disposers.push(() => again.dispose());
    await again.whenReady();
    expect(again.operation()).toBe("awaiting-approval");
    expect((await types(again, log)).filter((type) => type === "run.ended")).toHaveLength(1);
    await again.approve("call_danger");
    expect((await again.continue()).status).toBe("done");
    expect(danger.runs).toEqual(["rm"]);
  });

  it("needsApproval as a function: false runs at once, a throw fails closed; requireApproval gates by name (source policy)", async () => {
    const byArgs = await setup([twoCalls, { text: "done" }], { danger: { needsApproval: (args) => args.text !== "rm" } });
    expect((await byArgs.agent.prompt("go")).status).toBe("done");
    expect(byArgs.danger.runs).toEqual(["rm"]);

    const throwing = await setup([twoCalls], { danger: { needsApproval: async () => { throw new Error("policy down"); } } });
    expect((await throwing.agent.prompt("go")).pendingApprovals).toEqual(["call_danger"]);

    const policy = await setup([twoCalls], { danger: {}, requireApproval: ["safe"] });
    const outcome = await policy.agent.prompt("go");
    expect(outcome.pendingApprovals).toEqual(["call_safe"]);
    expect(policy.danger.runs).toEqual(["rm"]);
    expect((await policy.agent.pendingApprovals())[0]).toMatchObject({ toolCallId: "call_safe", source: "policy" });
  });

  it("sequential batch: the calls after a gated one wait with it, and run in order after approval", async () => {
    const steps: FakeStep[] = [
      {
        toolCalls: [
          { id: "call_safe_1", name: "safe", arguments: { text: "one" } },
          { id: "call_danger", name: "danger", arguments: { text: "rm" } },
          { id: "call_safe_2", name: "safe", arguments: { text: "two" } },
        ],
      },
      { text: "done" },
    ];
    const { agent, danger, safe, model } = await setup(steps, { toolExecution: "sequential" });
    const first = await agent.prompt("go");
    expect(first.pendingApprovals).toEqual(["call_danger"]);
    expect(safe.runs).toEqual(["one"]);
    await agent.approve("call_danger");
    expect((await agent.continue()).status).toBe("done");
    expect(danger.runs).toEqual(["rm"]);
    expect(safe.runs).toEqual(["one", "two"]);
    expect(toolResults(model.requests[1].messages).map((result) => result.toolCallId)).toEqual(["call_safe_1", "call_danger", "call_safe_2"]);
  });

  it("recovery: a run cut off after approval.requested ends suspended, the gated call keeps waiting (not interrupted), its sibling is interrupted", async () => {
    const { log, session } = await sqliteSession();
    disposers.push(() => log.close());
    const model = { provider: "fake", modelId: "fake-model", api: "fake-api" };
    await appendUnfinishedRun(session, "r1", model);
    // c1 has a result; c2 was gated when the process died.
    await session.appendEvents([
      { type: "approval.requested", data: { runId: "r1", toolCallId: "c2", toolName: "read", inputDigest: inputDigest({}), source: "policy" }, metadata: { runId: "r1" } },
    ]);
    const report = await recoverSession(session);
    expect(report).toMatchObject({ recovered: true, pendingToolCallIds: ["c2"], interruptedToolCallIds: [] });
    const ended = (await sessionEvents(log, session.id)).filter((event) => isEventOfType(event, "run.ended")).map((event) => event.data);
    expect(ended).toEqual([{ runId: "r1", status: "suspended", pendingToolCallIds: ["c2"], interruptedToolCallIds: [] }]);
    const reads: string[] = [];
    const read = defineTool({ name: "read", description: "reads", parameters: z.object({}), async execute() { reads.push("read"); return { content: [{ type: "text", text: "r2" }] }; } });
    const fake = fakeModel([{ text: "done" }]);
    const agent = createAgent({ session, model: fake, tools: [read], requireApproval: ["read"] });
    disposers.push(() => agent.dispose());
    await agent.whenReady();
    expect(agent.operation()).toBe("awaiting-approval");
    await agent.approve("c2");
    expect((await agent.continue()).status).toBe("done");
    expect(reads).toEqual(["read"]);
    expect(toolResults(fake.requests[0].messages).map((result) => [result.toolCallId, result.isError])).toEqual([["c1", false], ["c2", false]]);
  });
});

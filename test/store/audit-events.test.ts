/**
 * The audit stream: run events without content. A real session runs a
 * prompt with a gated tool call (approved, with a reason), a sibling tool, a final answer and
 * a defineAgent-style agent.started / agent.ended record; a secret is planted in the prompt, the
 * model's text, each tool input, the tool result, the decision's reason and the agent's input and
 * output. The log holds every secret (so the check can fail); the audit stream holds none, and
 * carries the ids, names, counts, durations, statuses and usage instead.
 *
 * Elicitations (`elicitation-<sessionId>`, not the session stream) are audited too: on a SQLite
 * file a tool asks twice through the durable elicitation waiter (answered from the log, once
 * accepted, once declined), with a secret in the message, the requested schema and the accepted
 * content; a subscriber from before the run (live) and one after it (catch-up) both get the
 * requests and answers between the tool's start and end, ids and action and wait, no secret.
 */
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import { answerElicitation, createElicitationWaiter, type ElicitationAnswer } from "../../src/harness/elicitations.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { AUDIT_EVENT_TYPES, type AuditEvent } from "../../src/store/events/audit.ts";
import { elicitationStreamId } from "../../src/store/events/elicitation-events.ts";
import { tombstoneStreamId, type SessionDeletedData } from "../../src/store/events/session-events.ts";
import { fakeModel, memorySession, sessionEvents, sqliteSession } from "../machines/helpers.ts";

const SECRETS = {
  prompt: "SECRET-PROMPT-4711",
  gatedInput: "SECRET-GATED-INPUT-4711",
  siblingInput: "SECRET-SIBLING-INPUT-4711",
  result: "SECRET-RESULT-4711",
  output: "SECRET-OUTPUT-4711",
  reason: "SECRET-REASON-4711",
  agentInput: "SECRET-AGENT-INPUT-4711",
  agentOutput: "SECRET-AGENT-OUTPUT-4711",
};

describe("auditEvents$: run events without content", () => {
  it("carries ids, names, counts, durations, statuses and usage, and none of the content", async () => {
    const { log, session } = await memorySession();
    const tool = (name: string, needsApproval: boolean) =>
      defineTool({
        name,
        description: name,
        parameters: z.object({ text: z.string() }),
        needsApproval,
        async execute() {
          return { content: [{ type: "text", text: `${name}: ${SECRETS.result}` }] };
        },
      });
    const model = fakeModel([
      {
        text: "let me look",
        toolCalls: [
          { id: "call_gated", name: "gated", arguments: { text: SECRETS.gatedInput } },
          { id: "call_free", name: "free", arguments: { text: SECRETS.siblingInput } },
        ],
      },
      { text: `the answer is ${SECRETS.output}` },
    ]);
    const agent = createAgent({ session, model, tools: [tool("gated", true), tool("free", false)] });
    await agent.appendRecords([{ type: "agent.started", data: { agent: "reviewer", invocationId: "inv-1", mode: "text", maxRepairs: 2, input: { topic: SECRETS.agentInput } } }]);
    const first = await agent.prompt(SECRETS.prompt);
    expect(first.status).toBe("suspended");
    await agent.approve("call_gated", { reason: SECRETS.reason });
    const second = await agent.continue();
    expect(second.status).toBe("done");
    const usage = { input: 20, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 30 };
    await agent.appendRecords([
      { type: "agent.ended", data: { agent: "reviewer", invocationId: "inv-1", status: "done", runId: second.runId, repairs: 0, usage, output: { verdict: SECRETS.agentOutput } } },
    ]);
    await agent.waitForIdle();

    // The log itself holds every secret: the audit check below can fail.
    const logged = JSON.stringify(await sessionEvents(log, session.id));
    for (const secret of Object.values(SECRETS)) expect(logged).toContain(secret);

    const target = session.view.version;
    const audit: AuditEvent[] = await firstValueFrom(agent.auditEvents$.pipe(takeWhile((event) => event.version < target, true), toArray()));
    const text = JSON.stringify(audit);
    for (const [what, secret] of Object.entries(SECRETS)) expect(text, `the ${what} reached the audit stream`).not.toContain(secret);
    // Only the audit types, with their ids and figures.
    for (const event of audit) expect(AUDIT_EVENT_TYPES).toContain(event.type);
    expect(audit.map((event) => event.type)).toEqual([
      "agent.started",
      "run.started",
      "model.ended",
      "tool.started",
      "approval.requested",
      "tool.started",
      "tool.ended",
      "run.ended",
      "approval.ended",
      "run.started",
      "tool.ended",
      "model.ended",
      "run.ended",
      "agent.ended",
    ]);
    const byType = <T extends AuditEvent["type"]>(type: T, index = 0) => audit.filter((event) => event.type === type)[index] as Extract<AuditEvent, { type: T }>;
    expect(byType("run.ended")).toMatchObject({ runId: first.runId, status: "suspended", pendingApprovals: 1, toolCalls: 2, modelCalls: 1, usage: { input: 10, output: 5, total: 15 } });
    expect(byType("run.ended", 1)).toMatchObject({ runId: second.runId, status: "done", turns: 2, toolCalls: 0, modelCalls: 1 });
    expect(byType("run.started", 1)).toMatchObject({ kind: "resume", provider: "fake", modelId: "fake-model" });
    expect(byType("approval.requested")).toMatchObject({ toolCallId: "call_gated", toolName: "gated", source: "tool", inputDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(byType("approval.ended")).toMatchObject({ toolCallId: "call_gated", status: "approved", hasReason: true, waitedMs: expect.any(Number) });
    expect(byType("tool.ended", 1)).toMatchObject({ toolCallId: "call_gated", outcome: "succeeded", isError: false, durationMs: expect.any(Number) });
    expect(byType("model.ended")).toMatchObject({ stopReason: "toolUse", error: false, usage: { input: 10, output: 5, total: 15 } });
    expect(byType("agent.ended")).toMatchObject({ agent: "reviewer", invocationId: "inv-1", status: "done", repairs: 0, usage: { total: 30 } });
    for (const event of audit) expect(event.sessionId).toBe(session.id);
    await agent.dispose();
  });
});

const ELICITATION_SECRETS = {
  message: "SECRET-ELICIT-MESSAGE-4711",
  schema: "SECRET-ELICIT-SCHEMA-4711",
  content: "SECRET-ELICIT-CONTENT-4711",
};

describe("auditEvents$: elicitations without content", () => {
  it("has each request and answer, in log order between the tool's start and end, live and on catch-up, with none of the content", async () => {
    const { log, repo, session } = await sqliteSession();
    // The answers, given from the log by "another party" once each request is logged.
    const answers: ElicitationAnswer[] = [{ action: "accept", content: { name: ELICITATION_SECRETS.content } }, { action: "decline" }];
    const answering: Promise<unknown>[] = [];
    const waiter = createElicitationWaiter({
      log,
      locate: () => ({ sessionId: session.id }),
      onRequested: (record) => answering.push(answerElicitation(log, session.id, record.elicitationId, answers.shift()!, "api")),
    });
    const requestedSchema = { type: "object", properties: { name: { type: "string", description: ELICITATION_SECRETS.schema } }, required: ["name"] };
    const ask = defineTool({
      name: "ask",
      description: "asks the user twice",
      parameters: z.object({}),
      async execute(_input, { toolCallId, signal }) {
        const first = await waiter({ server: "people", tool: "whoami", toolCallId, message: `Your name? ${ELICITATION_SECRETS.message}`, requestedSchema, signal });
        const second = await waiter({ server: "people", tool: "whoami", toolCallId, message: `Sure? ${ELICITATION_SECRETS.message}`, requestedSchema, signal });
        return { content: [{ type: "text", text: `${first.action} then ${second.action}` }] };
      },
    });
    const agent = createAgent({ session, model: fakeModel([{ text: "asking", toolCalls: [{ id: "call_ask", name: "ask", arguments: {} }] }, { text: "done" }]), tools: [ask] });
    const untilRunEnd = () => firstValueFrom(agent.auditEvents$.pipe(takeWhile((event) => event.type !== "run.ended", true), toArray()));
    const live = untilRunEnd();
    const outcome = await agent.prompt("ask me");
    expect(outcome.status).toBe("done");
    await Promise.all(answering);
    await agent.waitForIdle();

    const logged = JSON.stringify([...(await sessionEvents(log, session.id)), ...(await log.readStream(elicitationStreamId(session.id)))]);
    for (const secret of Object.values(ELICITATION_SECRETS)) expect(logged).toContain(secret);

    const seenLive = await live;
    const caughtUp = await untilRunEnd();
    expect(caughtUp).toEqual(seenLive);
    for (const [what, secret] of Object.entries(ELICITATION_SECRETS)) expect(JSON.stringify(caughtUp), `the ${what} reached the audit stream`).not.toContain(secret);
    for (const event of caughtUp) expect(AUDIT_EVENT_TYPES).toContain(event.type);
    expect(caughtUp.map((event) => event.type)).toEqual([
      "run.started",
      "model.ended",
      "tool.started",
      "elicitation.requested",
      "elicitation.answered",
      "elicitation.requested",
      "elicitation.answered",
      "tool.ended",
      "model.ended",
      "run.ended",
    ]);
    type Elicited = Extract<AuditEvent, { type: `elicitation.${string}` }>;
    const [firstAsked, firstAnswered, secondAsked, secondAnswered] = caughtUp.filter((event): event is Elicited => event.type.startsWith("elicitation."));
    const requestFields = { sessionId: session.id, stream: "elicitation", elicitationId: expect.stringMatching(/^el_/), server: "people", toolCallId: "call_ask", toolName: "whoami" };
    expect(firstAsked).toEqual({ ...requestFields, type: "elicitation.requested", version: 1, at: expect.any(String), requestDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(firstAnswered).toEqual({ ...requestFields, elicitationId: firstAsked.elicitationId, type: "elicitation.answered", version: 2, at: expect.any(String), action: "accept", via: "api", waitedMs: expect.any(Number) });
    expect(secondAsked).toMatchObject({ type: "elicitation.requested", version: 3 });
    expect(secondAnswered).toMatchObject({ type: "elicitation.answered", elicitationId: secondAsked.elicitationId, action: "decline", via: "api" });
    // The wait is measured between the logged times, so a replay gives the same number.
    const answeredEvent = (await log.readStream(elicitationStreamId(session.id)))[1];
    expect((firstAnswered as Extract<Elicited, { type: "elicitation.answered" }>).waitedMs).toBe(Date.parse(answeredEvent.time) - Date.parse(firstAsked.at));
    // Session events keep naming the session stream.
    for (const event of caughtUp.filter((item) => !item.type.startsWith("elicitation."))) expect(event.stream).toBeUndefined();
    await agent.dispose();

    // A delete keeps the same records in the tombstone and removes the elicitations with their content.
    await repo.delete(session.id);
    const [tombstone] = await log.readStream(tombstoneStreamId(session.id));
    expect((tombstone.data as SessionDeletedData).audit).toEqual(caughtUp);
    expect(await log.readStream(elicitationStreamId(session.id))).toEqual([]);
    for (const secret of Object.values(ELICITATION_SECRETS)) expect(JSON.stringify(tombstone)).not.toContain(secret);
    await log.close();
  });
});

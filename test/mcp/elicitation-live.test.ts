/**
 * Elicitation while the asking process lives: a harness runs server-everything's
 * `trigger-elicitation-request` (stdio); the request is a wait in the log; the HTTP routes of a
 * handler over another connection to the same SQLite file (another process would do the same)
 * list it and answer it; the waiting run gets the answer through the log and ends done. The
 * call's 1 s timeout is paused while the answer is awaited. Real SQLite, the real MCP server,
 * the real @ai-sdk/openai client against the loopback server. The session's audit stream then
 * has the request and the answer inside the tool call, without the answer's content.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { answerElicitation, ElicitationConflictError, listElicitations } from "../../src/harness/elicitations.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { everythingStdio } from "./helpers.ts";

let server: OpenAIServer;
let harness: AgentHarness | undefined;
const closers: (() => Promise<void> | void)[] = [];
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const close of closers.splice(0)) await close();
  await server.close();
});

interface Listed {
  elicitations: { elicitationId: string; status: string; toolCallId?: string; message: string; answer?: { action: string; via: string } }[];
}

describe("MCP elicitation answered over HTTP while the run waits", { timeout: 120_000 }, () => {
  it("delivers the answer from another connection to the waiting run, with the call timeout paused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-elicit-live-"));
    const path = join(dir, "arbor.db");
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const requested: string[] = [];
    harness = await createHarness({
      eventLogPath: path,
      cwd: dir,
      models: { main: model },
      mcpServers: [everythingStdio("everything", { callTimeoutMs: 1000 })],
      elicitation: { onRequested: (record) => requested.push(record.elicitationId) },
    });
    expect(harness.mcp!.tools.map((tool) => tool.name)).toContain("everything__trigger-elicitation-request");

    const otherLog = createSqliteEventLog({ path });
    closers.push(() => otherLog.close());
    const handler = createChatHandler({ repository: createSessionRepository({ log: otherLog }) });
    const sessionId = harness.id;
    const api = (suffix: string, init?: RequestInit) => handler(new Request(`http://arbor.test/api/sessions/${sessionId}${suffix}`, init));
    const post = (id: string, body: unknown) => api(`/elicitations/${id}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

    server.script(toolCallResponse([{ id: "call_ask", name: "everything__trigger-elicitation-request", arguments: {} }]), textResponse("thanks, Grace"));
    const outcome = harness.prompt("ask me");

    let pending: Listed["elicitations"][number] | undefined;
    await vi.waitFor(
      async () => {
        const listed = (await (await api("/elicitations")).json()) as Listed;
        pending = listed.elicitations.find((item) => item.status === "pending");
        expect(pending).toBeDefined();
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(pending).toMatchObject({ toolCallId: "call_ask", message: "Please provide inputs for the following fields:" });
    expect(requested).toEqual([pending!.elicitationId]);

    // Longer than the call's 1 s timeout: the wait for a person does not count.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const invalid = await post(pending!.elicitationId, { action: "accept", content: { check: true } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "ELICITATION_ANSWER_INVALID" });
    expect((await post("el_unknown", { action: "decline" })).status).toBe(404);
    expect((await post(pending!.elicitationId, { action: "maybe" })).status).toBe(400);

    const answered = await post(pending!.elicitationId, { action: "accept", content: { name: "Grace Hopper", check: true } });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ changed: true, elicitation: { status: "answered", answer: { action: "accept", via: "http" } } });
    expect((await post(pending!.elicitationId, { action: "decline" })).status).toBe(409);

    const result = await outcome;
    expect(result.status).toBe("done");
    const tools = (server.requests[1].body as { messages: { role: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
    expect(JSON.stringify(tools)).toContain("Name: Grace Hopper");
    expect(JSON.stringify(tools)).not.toContain("did not answer within");

    // The session's audit stream has the request and the answer, in log order inside the tool call, without the answer's content.
    const audit = await firstValueFrom(harness.auditEvents$.pipe(takeWhile((event) => event.type !== "run.ended", true), toArray()));
    expect(audit.map((event) => event.type)).toEqual(["run.started", "model.ended", "tool.started", "elicitation.requested", "elicitation.answered", "tool.ended", "model.ended", "run.ended"]);
    expect(audit[3]).toMatchObject({ stream: "elicitation", elicitationId: pending!.elicitationId, server: "everything", toolCallId: "call_ask", runId: result.runId });
    expect(audit[4]).toMatchObject({ stream: "elicitation", elicitationId: pending!.elicitationId, action: "accept", via: "http", waitedMs: expect.any(Number) });
    expect((audit[4] as { waitedMs: number }).waitedMs).toBeGreaterThanOrEqual(1500);
    expect(JSON.stringify(audit)).not.toContain("Grace Hopper");
    expect(JSON.stringify(audit)).not.toContain("Please provide inputs");
  });

  it("an aborted run closes its unanswered request in the log as a cancel, so nothing stays pending", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-elicit-live-"));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const requested: string[] = [];
    harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      cwd: dir,
      models: { main: model },
      mcpServers: [everythingStdio()],
      elicitation: { onRequested: (record) => requested.push(record.elicitationId) },
    });
    const log = harness.repository!.log;
    server.script(toolCallResponse([{ id: "call_ask", name: "everything__trigger-elicitation-request", arguments: {} }]), textResponse("never"));
    const outcome = harness.prompt("ask me");
    await vi.waitFor(() => expect(requested).toHaveLength(1), { timeout: 30_000 });
    harness.abort("the user gave up");
    expect((await outcome).status).toBe("aborted");
    await vi.waitFor(async () => {
      const [record] = await listElicitations(log, harness!.id);
      expect(record).toMatchObject({ elicitationId: requested[0], status: "answered", answer: { action: "cancel", via: "ended" } });
    });
    // A late answer is refused: the request is closed.
    await expect(answerElicitation(log, harness.id, requested[0], { action: "decline" }, "api")).rejects.toSatisfy((error: unknown) => ElicitationConflictError.isInstance(error));
  });

  it("a server without a run to attribute it to gets an error, and nothing waits", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-elicit-live-"));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    harness = await createHarness({ eventLogPath: join(dir, "arbor.db"), cwd: dir, models: { main: model }, mcpServers: [everythingStdio()] });
    // Called outside any run: the request cannot belong to a session's wait.
    const tool = harness.mcp!.tools.find((item) => item.name === "everything__trigger-elicitation-request")!;
    const error = await tool.execute({}, { toolCallId: "x", idempotencyKey: "x", signal: new AbortController().signal, onUpdate: () => undefined, context: undefined }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/asked for input outside any run/);
  });
});

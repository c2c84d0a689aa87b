/**
 * The `ai` 7 chunks of the UI message stream, from real runs (a real harness on a SQLite file;
 * the model a scripted AI SDK mock or the loopback OpenAI server; the HTTP service for steering):
 * a retried model call is a `reset-step` (the client keeps only the retry's parts), an approval
 * decision is a `tool-approval-response`, and a message steered in over `POST /api/chat/:id/steer`
 * is a `steering-message` part of the reply, live and in the history.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { APICallError, type UIMessageChunk } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { foldChunks } from "../../src/http/ui-messages.ts";
import { projectRun } from "../../src/http/ui-projection.ts";
import { isArborEvent, type ArborEvent } from "../../src/store/events/catalogue.ts";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { messageOf, readChunks, sessionEvents, startService, TOKEN, userMessage, waitForEvent, type Service } from "./service.ts";

const arborEvents = (events: readonly unknown[]): ArborEvent[] => events.filter((event): event is ArborEvent => isArborEvent(event as never));
const types = (chunks: UIMessageChunk[]) => chunks.map((chunk) => chunk.type);

describe("ai 7 chunks from real runs", () => {
  let harness: AgentHarness | undefined;
  let dir: string | undefined;
  let model: OpenAIServer | undefined;
  let gated: GatedModelServer | undefined;
  let service: Service | undefined;
  afterEach(async () => {
    await harness?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await service?.close();
    await model?.close();
    await gated?.close();
    harness = dir = model = gated = service = undefined;
  });

  it("a retried model call is a reset-step: the client drops the discarded attempt's parts and keeps the retry's", async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-v7-reset-"));
    const overloaded = new APICallError({ message: "overloaded", url: "http://model.test", requestBodyValues: {}, statusCode: 503, isRetryable: true });
    const partial: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "I will first say some" },
      { type: "error", error: overloaded },
    ];
    harness = await createHarness({ eventLogPath: join(dir, "arbor.db"), cwd: dir, models: { main: scriptedModel([partial, { text: "Recovered answer." }]) }, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    expect((await harness.prompt("go")).status).toBe("done");
    const events = arborEvents(await harness.repository!.log.readStream(`session-${harness.id}`));
    expect(events.filter((event) => event.type === "message.ended" && event.data.role === "assistant")).toHaveLength(2);
    const chunks = projectRun(events);
    // The attempt streamed, then was reset inside the same step; the retry follows.
    expect(types(chunks)).toEqual(["start", "start-step", "text-start", "text-delta", "reset-step", "text-start", "text-delta", "text-end", "finish-step", "finish"]);
    const message = (await foldChunks(chunks))!;
    expect(message.parts.map((part) => [part.type, (part as { text?: string }).text ?? ""])).toEqual([
      ["step-start", ""],
      ["text", "Recovered answer."],
    ]);
  });

  it("an approval decision is a tool-approval-response on the call's part, before the continuation's result", async () => {
    model = await startOpenAIServer();
    model.script(turnResponse({ text: "Reading both.", toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }, { id: "call_2", name: "read", arguments: { path: "b.txt" } }] }), textResponse("One read, one declined."));
    service = await startService({ modelUrl: model.url, requireApproval: ["read"] });
    const user = userMessage("read a.txt and b.txt");
    const first = await readChunks(await service.transport().sendMessages({ chatId: "appr7", messages: [user], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const asked = (await messageOf(first))!;
    const answered = {
      ...asked,
      parts: asked.parts.map((part: any) =>
        part.state === "approval-requested" ? { ...part, state: "approval-responded", approval: { ...part.approval, approved: part.toolCallId === "call_1", ...(part.toolCallId === "call_2" ? { reason: "not that one" } : {}) } } : part,
      ),
    };
    await readChunks(await service.transport().sendMessages({ chatId: "appr7", messages: [user, answered], trigger: "submit-message", messageId: answered.id, abortSignal: undefined }));
    const chunks = projectRun(arborEvents(await sessionEvents(service.log, "appr7")));
    const responses = chunks.filter((chunk) => chunk.type === "tool-approval-response");
    expect(responses).toEqual([
      { type: "tool-approval-response", approvalId: "call_1", approved: true },
      { type: "tool-approval-response", approvalId: "call_2", approved: false, reason: "not that one" },
    ]);
    const at = (predicate: (chunk: UIMessageChunk) => boolean) => chunks.findIndex(predicate);
    expect(at((chunk) => chunk.type === "tool-approval-response")).toBeGreaterThan(at((chunk) => chunk.type === "finish"));
    expect(at((chunk) => chunk.type === "tool-approval-response")).toBeLessThan(at((chunk) => chunk.type === "tool-output-available"));
    // The history a reloaded page gets shows the decisions on the parts.
    const history = (await (await fetch(`${service.url}/api/sessions/appr7`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: { role: string; parts: any[] }[] };
    const tools = history.messages.find((message) => message.role === "assistant")!.parts.filter((part) => part.type === "tool-read");
    expect(tools.map((part) => [part.toolCallId, part.state, part.approval?.approved, part.approval?.reason])).toEqual([
      ["call_1", "output-available", true, undefined],
      ["call_2", "output-denied", false, "not that one"],
    ]);
  });

  it("POST /api/chat/:id/steer queues a message into the running run: the next model request has it, the stream shows it as a steering-message part", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: "Working on it.", chunkSize: 4 }, { text: "En français." });
    service = await startService({ modelUrl: gated.url });
    const steer = (text: unknown, id = "steer7") =>
      fetch(`${service!.url}/api/chat/${id}/steer`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ text }) });
    const streaming = service.transport().sendMessages({ chatId: "steer7", messages: [userMessage("explain")], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    await gated.waitForRequests(1);
    gated.release(0, 2);
    const empty = await steer("  ");
    expect(empty.status).toBe(400);
    const queued = await steer("answer in French");
    expect(queued.status).toBe(202);
    expect(await queued.json()).toEqual({ queued: true });
    await waitForEvent(service.log, "steer7", (event) => event.type === "queue.changed" && (event.data as { action: string }).action === "enqueued");
    gated.release(0);
    await gated.waitForRequests(2);
    expect(gated.body(1)).toContain("answer in French");
    gated.release(1);
    const chunks = await readChunks(await streaming);
    const steering = chunks.filter((chunk) => chunk.type === "steering-message");
    expect(steering).toEqual([{ type: "steering-message", id: expect.any(String), parts: [{ type: "text", text: "answer in French" }] }]);
    const live = (await messageOf(chunks))!;
    expect(live.parts.filter((part) => part.type === "text" || part.type === "steering-message").map((part: any) => part.text ?? part.parts[0].text)).toEqual(["Working on it.", "answer in French", "En français."]);
    // The history holds it inside the reply, not as a user message of its own.
    const history = (await (await fetch(`${service.url}/api/sessions/steer7`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: { role: string; parts: unknown[] }[] };
    expect(history.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(history.messages[1].parts).toEqual(live.parts);
    // Nothing runs now: a steer is refused, naming what to do.
    const idle = await steer("more");
    expect(idle.status).toBe(409);
    expect(((await idle.json()) as { error: { code: string } }).error.code).toBe("NO_ACTIVE_RUN");
  });
});

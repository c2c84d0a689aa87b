import { afterEach, describe, expect, it } from "vitest";
import type { UIMessage, UIMessageChunk } from "ai";
import { startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { UI_MESSAGE_STREAM_HEADERS } from "../../src/http/sse.ts";
import { startGatedModelServer, type GatedModelServer } from "./gated-model-server.ts";
import { messageOf, readChunks, sessionEvents, startService, TOKEN, userMessage, waitForEvent, type Service } from "./service.ts";

const TWO_READS = { text: "Let me read both files.", toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }, { id: "call_2", name: "read", arguments: { path: "b.txt" } }] };
const ANSWER = "Both files are read.";

/** What a client must hold after the two-tool-call run (ids from the log: run id, call ids). */
function expectedMessage(runId: string): unknown {
  const tool = (toolCallId: string, path: string) => ({
    type: "tool-read",
    toolCallId,
    state: "output-available",
    input: { path },
    output: { content: [{ type: "text", text: `contents of ${path}` }] },
  });
  return {
    id: runId,
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "text", text: TWO_READS.text, state: "done" },
      expect.objectContaining(tool("call_1", "a.txt")),
      expect.objectContaining(tool("call_2", "b.txt")),
      { type: "step-start" },
      { type: "text", text: ANSWER, state: "done" },
    ],
  };
}

async function runIdOf(service: Service, id: string): Promise<string> {
  const started = (await sessionEvents(service.log, id)).filter((event) => event.type === "run.started");
  return (started.at(-1)!.data as { runId: string }).runId;
}

describe("arbor HTTP service with the ai package's own client", () => {
  let service: Service | undefined;
  let model: OpenAIServer | undefined;
  let gated: GatedModelServer | undefined;
  afterEach(async () => {
    gated?.release(gated.requestCount() - 1);
    await service?.close();
    await model?.close();
    await gated?.close();
    service = model = gated = undefined;
  });

  it("streams an answer with two tool calls as the expected UIMessage, with the exact headers", async () => {
    model = await startOpenAIServer();
    model.script(turnResponse(TWO_READS), textResponse(ANSWER), turnResponse(TWO_READS), textResponse(ANSWER));
    service = await startService({ modelUrl: model.url });

    const raw = await fetch(`${service.url}/api/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "chat-1", messages: [userMessage("read a.txt and b.txt")], trigger: "submit-message" }),
    });
    for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) expect(raw.headers.get(name)).toBe(value);
    const text = await raw.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(text).not.toMatch(/^event:/m);

    const chunks = await readChunks(await service.transport().sendMessages({ chatId: "chat-2", messages: [userMessage("read a.txt and b.txt")], trigger: "submit-message", messageId: undefined, abortSignal: undefined }));
    const message = await messageOf(chunks);
    expect(message).toEqual(expectedMessage(await runIdOf(service, "chat-2")));
    const types = chunks.map((chunk) => chunk.type);
    expect(types.slice(0, 3)).toEqual(["start", "start-step", "text-start"]);
    expect(types.filter((type) => type === "tool-input-available")).toHaveLength(2);
    expect(types.filter((type) => type === "tool-output-available")).toHaveLength(2);
    expect(types.filter((type) => type === "start-step")).toHaveLength(2);
    expect(types.indexOf("tool-output-available")).toBeGreaterThan(types.lastIndexOf("tool-input-available"));
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
    // The log holds the history: the session detail gives the same message back.
    const detail: { messages: UIMessage[] } = (await (await fetch(`${service.url}/api/sessions/chat-2`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as never;
    expect(detail.messages.map((m: UIMessage) => m.role)).toEqual(["user", "assistant"]);
    expect(detail.messages[1]).toEqual(message);
  });

  it("a dropped connection is resumed: the replay rebuilds the same message, no part duplicated or merged", async () => {
    gated = await startGatedModelServer();
    gated.script({ ...TWO_READS, chunkSize: 4 }, { text: ANSWER });
    service = await startService({ modelUrl: gated.url });
    const abort = new AbortController();
    const stream = await service.transport().sendMessages({ chatId: "drop", messages: [userMessage("read both")], trigger: "submit-message", messageId: undefined, abortSignal: abort.signal });
    await gated.waitForRequests(1);
    // Let the text and part of the first call's arguments out, then read until a tool input delta arrived.
    const frames = gated.frames(0);
    const firstArgs = frames.findIndex((frame) => frame.includes('"arguments":"{') || frame.includes('"arguments":"{\\"'));
    gated.release(0, firstArgs + 1);
    const reader = stream.getReader();
    const before: UIMessageChunk[] = [];
    while (!before.some((chunk) => chunk.type === "tool-input-delta")) before.push((await reader.read()).value!);
    abort.abort();
    await reader.read().catch(() => undefined);

    const resumed = await service.transport().reconnectToStream({ chatId: "drop" });
    expect(resumed).not.toBeNull();
    gated.release(0);
    await gated.waitForRequests(2);
    gated.release(1);
    const chunks = await readChunks(resumed!);
    expect(chunks[0]).toEqual({ type: "start", messageId: await runIdOf(service, "drop") });
    expect(await messageOf(chunks)).toEqual(expectedMessage(await runIdOf(service, "drop")));
    const starts = chunks.filter((chunk) => chunk.type === "text-start" || chunk.type === "tool-input-start").map((chunk) => ("id" in chunk ? chunk.id : chunk.toolCallId));
    expect(new Set(starts).size).toBe(starts.length);
    // After the end there is nothing to resume.
    expect(await service.transport().reconnectToStream({ chatId: "drop" })).toBeNull();
  });

  it("stop ends the run; the partial message is kept in the log", async () => {
    gated = await startGatedModelServer();
    gated.script({ text: "This answer will be cut short by the client." });
    service = await startService({ modelUrl: gated.url });
    const stream = await service.transport().sendMessages({ chatId: "stop", messages: [userMessage("talk")], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
    await gated.waitForRequests(1);
    gated.release(0, 3);
    await waitForEvent(service.log, "stop", (event) => event.type === "message.delta");
    const stopped = await fetch(`${service.url}/api/chat/stop/stop`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await stopped.json()).toEqual({ stopped: true });
    const chunks = await readChunks(stream);
    expect(chunks.at(-1)).toMatchObject({ type: "abort" });
    const events = await sessionEvents(service.log, "stop");
    expect(events.at(-1)).toMatchObject({ type: "run.ended", data: { status: "aborted" } });
    const assistant = events.find((event) => event.type === "entry.appended" && (event.data as any).entry.message?.role === "assistant");
    expect((assistant?.data as any).entry.message.stopReason).toBe("aborted");
    expect((await messageOf(chunks))?.parts.find((part) => part.type === "text")).toMatchObject({ text: expect.stringMatching(/^This/) });
    expect(await service.transport().reconnectToStream({ chatId: "stop" })).toBeNull();
    expect(await (await fetch(`${service.url}/api/chat/stop/stop`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } })).json()).toEqual({ stopped: false });
  });

  it("requests without the token, or for an unknown or another tenant's session, get 401/404 and leave no trace in the log", async () => {
    model = await startOpenAIServer();
    service = await startService({ modelUrl: model.url });
    const other = await service.harness.repository!.create({ id: "acme-chat", cwd: "/tmp", tenant: "acme" });
    const head = await service.log.headPosition();
    const streams = (await service.log.listStreams()).length;
    const body = (id: string) => JSON.stringify({ id, messages: [userMessage("hi")], trigger: "submit-message" });
    const routes = (id: string): [string, string, string?][] => [
      ["POST", "/api/chat", body(id)],
      ["GET", `/api/chat/${id}/stream`],
      ["POST", `/api/chat/${id}/stop`],
      ["GET", `/api/sessions/${id}`],
      ["GET", `/api/sessions/${id}/events?from=0`],
    ];
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: TOKEN }] as Record<string, string>[]) {
      for (const [method, path, payload] of [...routes("new-chat"), ["GET", "/api/sessions"] as [string, string]]) {
        const response = await fetch(`${service.url}${path}`, { method, headers, body: payload });
        expect({ path, method, status: response.status }).toEqual({ path, method, status: 401 });
      }
    }
    for (const id of [other.id, "no-such-session"]) {
      // (GET /api/chat/:id/stream answers 204 for these: service-edges.test.ts)
      for (const [method, path, payload] of routes(id).filter(([method, path]) => !path.endsWith("/stream") && (id !== "no-such-session" || !(method === "POST" && path === "/api/chat")))) {
        const response = await fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` }, body: payload });
        expect({ path, method, status: response.status }).toEqual({ path, method, status: 404 });
      }
    }
    const list: { sessions: { id: string }[] } = (await (await fetch(`${service.url}/api/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as never;
    expect(list.sessions.map((row: { id: string }) => row.id)).not.toContain(other.id);
    expect(await service.log.headPosition()).toBe(head);
    expect((await service.log.listStreams()).length).toBe(streams);
    expect(model.requests).toEqual([]);
  });
});

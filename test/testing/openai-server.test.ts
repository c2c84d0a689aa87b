/**
 * The loopback OpenAI-wire test server itself, spoken to with plain fetch: routing,
 * recording, script order and exhaustion, JSON vs SSE, fixtures, hang, reset, close.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { OpenAIServer } from "../../src/testing/index.ts";
import {
  errorResponse,
  fixtureResponse,
  fixtureResponses,
  hangResponse,
  resetResponse,
  startOpenAIServer,
  streamErrorResponse,
  textResponse,
  toolCallResponse,
} from "../../src/testing/index.ts";
import { sharedPath } from "../shared-dir.ts";

const FIXTURES = sharedPath("real-inputs/openai-fixtures");
let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server!.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

function dataLines(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice(6))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

describe("startOpenAIServer", () => {
  it("binds 127.0.0.1 on an ephemeral port and exposes a /v1 base URL", async () => {
    server = await startOpenAIServer();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(server.port).toBeGreaterThan(0);
  });

  it("records every request (path, lower-cased headers, parsed body) and answers in script order", async () => {
    server = await startOpenAIServer({ responses: [textResponse("one")] });
    server.script(textResponse("two"));
    const first = (await (await post("/chat/completions", { model: "m", messages: [], stream: false }, { "X-Trace": "t1" })).json()) as any;
    const second = (await (await post("/chat/completions", { model: "m", messages: [], stream: false })).json()) as any;
    expect(first.choices[0].message.content).toBe("one");
    expect(second.choices[0].message.content).toBe("two");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]).toMatchObject({ method: "POST", path: "/v1/chat/completions", body: { model: "m", stream: false } });
    expect(server.requests[0].headers["x-trace"]).toBe("t1");
  });

  it("answers 500 with a clear body when the script is exhausted, and 404 for unknown routes", async () => {
    server = await startOpenAIServer();
    const exhausted = await post("/chat/completions", { stream: true });
    expect(exhausted.status).toBe(500);
    expect(((await exhausted.json()) as any).error.message).toMatch(/no scripted response left for POST \/v1\/chat\/completions \(request #1\)/);
    const missing = await post("/embeddings", {});
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.message).toMatch(/no route for POST \/v1\/embeddings/);
  });

  it("renders tool calls as Chat SSE: id/type/name on the first delta, arguments in pieces, usage, [DONE]", async () => {
    server = await startOpenAIServer({ responses: [toolCallResponse([{ id: "call_a", name: "read", arguments: { path: "x.txt" } }], { usage: { input: 3, output: 4 } })] });
    const response = await post("/chat/completions", { stream: true });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const chunks = dataLines(await response.text()) as any[];
    expect(chunks.at(-1)).toBe("[DONE]");
    const calls = chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "" } });
    expect(calls.slice(1).map((call: any) => call.function.arguments).join("")).toBe('{"path":"x.txt"}');
    expect(chunks.find((chunk) => chunk.choices?.[0]?.finish_reason)?.choices[0].finish_reason).toBe("tool_calls");
    expect(chunks.at(-2).usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it("renders the same turn as Responses SSE on /v1/responses", async () => {
    server = await startOpenAIServer({ responses: [textResponse("hi there")] });
    const events = dataLines(await (await post("/responses", { stream: true })).text()) as any[];
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  });

  it("answers non-streaming requests with JSON, usable by the AI SDK's generateText on both APIs", async () => {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const { generateText } = await import("ai");
    server = await startOpenAIServer({ responses: [textResponse("chat json"), toolCallResponse([{ id: "call_9", name: "read", arguments: { path: "p" } }], { text: "calling" })] });
    const openai = createOpenAI({ baseURL: server.url, apiKey: "k" });
    const chat = await generateText({ model: openai.chat("gpt-test"), prompt: "hi", maxRetries: 0 });
    expect(chat.text).toBe("chat json");
    expect(chat.usage.inputTokens).toBe(10);
    const responses = await generateText({ model: openai.responses("gpt-test"), prompt: "hi", maxRetries: 0 });
    expect(responses.text).toBe("calling");
    expect(responses.toolCalls.map((call) => [call.toolCallId, call.toolName, call.input])).toEqual([["call_9", "read", { path: "p" }]]);
    expect(server.requests.map((request) => request.body.stream ?? false)).toEqual([false, false]);
  });

  it("replays fixtures byte for byte (.bin raw SSE) and splits multi-response chunk files", async () => {
    const { readFileSync } = await import("node:fs");
    const raw = `${FIXTURES}/e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin`;
    server = await startOpenAIServer({ responses: [fixtureResponse(raw), fixtureResponse(`${FIXTURES}/openai-error.1.json`, { status: 429 })] });
    expect(await (await post("/chat/completions", { stream: true })).text()).toBe(readFileSync(raw, "utf8"));
    const quota = await post("/chat/completions", {});
    expect(quota.status).toBe(429);
    expect(((await quota.json()) as any).error.code).toBe("insufficient_quota");
    const turns = fixtureResponses(`${FIXTURES}/openai-reasoning-encrypted-content.1.chunks.txt`);
    expect(turns.map((turn) => (turn.kind === "frames" ? turn.frames.filter((frame) => frame.includes('"response.created"')).length : -1))).toEqual([1, 1, 1, 1]);
  });

  it("errorResponse sends status, JSON body and headers", async () => {
    server = await startOpenAIServer({ responses: [errorResponse(429, { error: { message: "slow down" } }, { "retry-after": "2" })] });
    const response = await post("/responses", {});
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("2");
    expect(await response.json()).toEqual({ error: { message: "slow down" } });
  });

  it("streamErrorResponse ends with the provider's error event (Chat: an error chunk)", async () => {
    server = await startOpenAIServer({ responses: [streamErrorResponse({ message: "boom" }, "partial")] });
    const chunks = dataLines(await (await post("/chat/completions", { stream: true })).text()) as any[];
    expect(chunks.at(-1)).toEqual({ error: { message: "boom", type: "server_error", code: null, param: null } });
    expect(chunks.some((chunk) => chunk.choices?.[0]?.delta?.content === "partial")).toBe(true);
  });

  it("hangResponse sends partial content and never ends; close() still returns", async () => {
    server = await startOpenAIServer({ responses: [hangResponse("waiting")] });
    const response = await post("/chat/completions", { stream: true });
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain('"role":"assistant"');
    const pending = reader.read().then(
      () => "ended",
      () => "errored",
    );
    await server.close();
    server = undefined;
    // The connection is destroyed by close(): the client sees the stream end or fail, never hang.
    expect(["ended", "errored"]).toContain(await pending);
  });

  it("resetResponse destroys the socket after the partial content", async () => {
    server = await startOpenAIServer({ responses: [resetResponse("cut")] });
    const response = await post("/chat/completions", { stream: true });
    await expect(response.text()).rejects.toThrow();
  });

  it("waitForRequests resolves once enough requests arrived", async () => {
    server = await startOpenAIServer({ responses: [textResponse("x")] });
    const waiting = server.waitForRequests(1);
    await post("/chat/completions", { stream: false });
    await waiting;
    expect(server.requests).toHaveLength(1);
    expect(server.remaining()).toBe(0);
  });
});

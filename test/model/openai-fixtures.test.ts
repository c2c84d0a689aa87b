/**
 * The real @ai-sdk/openai client (through createOpenAIModel) against the loopback
 * OpenAI-wire server replaying recorded provider streams: the exact resulting messages.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { createOpenAIModel, stableResponsesItemIds } from "../../src/adapters/model/index.ts";
import type { AssistantMessage, ToolCall } from "../../src/core/messages.ts";
import type { ModelStreamEvent } from "../../src/core/model-stream.ts";
import type { OpenAIServer } from "../../src/testing/index.ts";
import { fixtureResponse, fixtureResponses, startOpenAIServer } from "../../src/testing/index.ts";
import { collect, fixture, userRequest } from "./helpers.ts";

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  expect(server.remaining()).toBe(0);
});

const chat = () => createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test-key", api: "chat" });
const responses = () => createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test-key", api: "responses" });
const weatherTool = { name: "weather", description: "Weather for a place", parameters: { type: "object", properties: { location: { type: "string" } } } };

function toolCalls(message: AssistantMessage): Pick<ToolCall, "id" | "name" | "arguments">[] {
  return message.content.flatMap((block) => (block.type === "toolCall" ? [{ id: block.id, name: block.name, arguments: block.arguments }] : []));
}

/** Checks the stream protocol: start first, one terminal last, blocks one at a time, partial on every non-terminal event. */
function expectWellFormed(events: ModelStreamEvent[]): void {
  expect(events[0].type).toBe("start");
  const terminals = events.filter((event) => event.type === "done" || event.type === "error");
  expect(terminals).toHaveLength(1);
  expect(["done", "error"]).toContain(events[events.length - 1].type);
  let open: number | undefined;
  for (const event of events.slice(0, -1)) {
    expect("partial" in event).toBe(true);
    if (event.type.endsWith("-start") && "contentIndex" in event) {
      expect(open).toBeUndefined();
      open = event.contentIndex;
    } else if (event.type.endsWith("-end") && "contentIndex" in event) {
      expect(event.contentIndex).toBe(open);
      open = undefined;
    } else if (event.type.endsWith("-delta") && "contentIndex" in event) {
      expect(event.contentIndex).toBe(open);
    }
  }
  expect(open).toBeUndefined();
}

describe("Chat Completions fixtures", () => {
  it("gpt-4o parallel tool calls: both calls, ids and parsed arguments in order, toolUse, usage", async () => {
    server.script(fixtureResponse(fixture("f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin")));
    const { events, terminal, message } = await collect(chat(), userRequest("weather and stock", { tools: [weatherTool] }));
    expectWellFormed(events);
    expect(terminal.type).toBe("done");
    expect(toolCalls(message)).toEqual([
      { id: "call_JMW1whyEaYG438VE1OIflxA2", name: "GetWeatherArgs", arguments: { city: "Edinburgh", country: "GB", units: "c" } },
      { id: "call_DNYTawLBoN8fj3KN6qU9N1Ou", name: "get_stock_price", arguments: { ticker: "AAPL", exchange: "NASDAQ" } },
    ]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage).toEqual({ input: 149, output: 60, cacheRead: null, cacheWrite: null, totalTokens: 209 });
    expect(message.responseId).toBe("chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63");
    expect(message.responseModel).toBe("gpt-4o-2024-08-06");
    expect(message).toMatchObject({ api: "openai-chat", provider: "openai", model: "gpt-test" });
    // Argument deltas were streamed per call id, never glued across calls.
    const deltas = (id: string) => events.flatMap((event) => (event.type === "toolcall-delta" && event.id === id ? [event.delta] : [])).join("");
    expect(JSON.parse(deltas("call_JMW1whyEaYG438VE1OIflxA2"))).toEqual({ city: "Edinburgh", country: "GB", units: "c" });
    expect(JSON.parse(deltas("call_DNYTawLBoN8fj3KN6qU9N1Ou"))).toEqual({ ticker: "AAPL", exchange: "NASDAQ" });
  });

  it("gpt-4o single strict tool call", async () => {
    server.script(fixtureResponse(fixture("a247c49c5fcd492bfb7a02a3306ad615ed8d8f649888ebfddfbc3ee151f44d46.bin")));
    const { message } = await collect(chat(), userRequest("weather", { tools: [weatherTool] }));
    expect(toolCalls(message)).toEqual([{ id: expect.stringMatching(/^call_/), name: "get_weather", arguments: { city: "San Francisco", state: "CA" } }]);
    expect(message.stopReason).toBe("toolUse");
  });

  it("gpt-4o text answer", async () => {
    server.script(fixtureResponse(fixture("e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin")));
    const { events, message } = await collect(chat(), userRequest());
    expectWellFormed(events);
    expect(message.stopReason).toBe("stop");
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^I'm unable to provide real-time weather updates/) });
    const streamed = events.flatMap((event) => (event.type === "text-delta" ? [event.delta] : [])).join("");
    expect(streamed).toBe((message.content[0] as { text: string }).text);
  });

  it("long gpt-4.1-nano text stream with service_tier/obfuscation fields and detailed usage", async () => {
    server.script(fixtureResponse(fixture("openai-text.chunks.txt")));
    const { events, message } = await collect(chat(), userRequest());
    expectWellFormed(events);
    expect(message.stopReason).toBe("stop");
    expect((message.content[0] as { text: string }).text.startsWith("**Holiday Name:** Harmony Day")).toBe(true);
    expect(message.usage).toEqual({ input: 16, output: 300, cacheRead: 0, cacheWrite: null, totalTokens: 316 });
    expect(message.responseModel).toBe("gpt-4.1-nano-2025-04-14");
  });

  it("refusal: the refusal text is kept, stopReason error (content filter), not retryable", async () => {
    server.script(fixtureResponse(fixture("173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin")));
    const { terminal, message } = await collect(chat(), userRequest());
    expect(terminal.type).toBe("error");
    expect(message.content).toEqual([{ type: "text", text: "I'm sorry, I can't assist with that request." }]);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/content filter/);
    if (terminal.type === "error") expect(terminal.error.retryable).toBe(false);
  });

  it("max_tokens cut-off: stopReason length with the partial text", async () => {
    server.script(fixtureResponse(fixture("4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.bin")));
    const { message } = await collect(chat(), userRequest());
    expect(message.stopReason).toBe("length");
    expect(message.content).toEqual([{ type: "text", text: '{"' }]);
    expect(message.usage).toMatchObject({ input: 79, output: 1, totalTokens: 80 });
  });

  it("HTTP 400 body: the provider's message becomes errorMessage; not retryable", async () => {
    server.script(fixtureResponse(fixture("reasoning-model-legacy-parameter-error.json")));
    const { terminal, message } = await collect(chat(), userRequest());
    expect(terminal.type).toBe("error");
    expect(message.errorMessage).toBe("400 Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.");
    if (terminal.type === "error") expect(terminal.error).toEqual({ retryable: false, status: 400 });
  });

  it("deepseek: many tiny argument deltas, usage on the finish chunk with cache hits", async () => {
    server.script(fixtureResponse(fixture("deepseek-tool-call.chunks.txt")));
    const { events, message } = await collect(chat(), userRequest("weather", { tools: [weatherTool] }));
    expectWellFormed(events);
    expect(toolCalls(message)).toEqual([{ id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", name: "weather", arguments: { location: "San Francisco" } }]);
    // reasoning_content (ignored by @ai-sdk/openai) is read from the raw chunks, as pi does;
    // the empty content delta leaves no empty text block.
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "toolCall"]);
    expect(message.content[0]).toEqual({
      type: "thinking",
      thinking: 'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
      thinkingSignature: "reasoning_content",
    });
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage).toEqual({ input: 19, output: 83, cacheRead: 320, cacheWrite: null, totalTokens: 422 });
  });

  it('alibaba: continuation deltas repeating "id":"" do not start new calls', async () => {
    server.script(fixtureResponse(fixture("alibaba-tool-call.chunks.txt")));
    const { events, message } = await collect(chat(), userRequest("weather", { tools: [weatherTool] }));
    expectWellFormed(events);
    expect(toolCalls(message)).toEqual([{ id: "call_eee11723464a4b9eb8cee71d", name: "weather", arguments: { location: "San Francisco" } }]);
    expect(events.filter((event) => event.type === "toolcall-start")).toHaveLength(1);
    expect(message.usage).toMatchObject({ input: 295, output: 22, totalTokens: 317 });
  });

  it("xai: ~225 reasoning_content deltas, then the whole call in one delta; cost_in_usd_ticks ignored", async () => {
    server.script(fixtureResponse(fixture("xai-tool-call.chunks.txt")));
    const { events, message } = await collect(chat(), userRequest("weather", { tools: [weatherTool] }));
    expectWellFormed(events);
    expect(toolCalls(message)).toEqual([{ id: "call_79382389", name: "weather", arguments: { location: "San Francisco" } }]);
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "toolCall"]);
    expect(events.filter((event) => event.type === "thinking-delta").length).toBeGreaterThan(200);
    expect(message.stopReason).toBe("toolUse");
    expect(message.responseModel).toBe("grok-3-mini");
  });

  it("anthropic fallback gateway: text then a call whose index starts at 1; no usage → all null", async () => {
    server.script(fixtureResponse(fixture("anthropic-fallback-tool-call.sse")));
    const { events, message } = await collect(chat(), userRequest("read a.txt", { tools: [weatherTool] }));
    expectWellFormed(events);
    expect(message.content).toEqual([
      { type: "text", text: "Reading it." },
      { type: "toolCall", id: "toolu_sanitized", name: "read_file", arguments: { path: "a.txt" } },
    ]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage).toEqual({ input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null });
  });

  it("azure model-router: an empty first chunk with prompt_filter_results, content_filter_results on deltas", async () => {
    server.script(fixtureResponse(fixture("azure-model-router.1.chunks.txt")));
    const { events, message } = await collect(chat(), userRequest());
    expectWellFormed(events);
    expect(message.content).toEqual([{ type: "text", text: "Capital of Denmark." }]);
    expect(message.stopReason).toBe("stop");
    expect(message.responseModel).toBe("gpt-5-nano-2025-08-07");
    expect(message.usage).toEqual({ input: 15, output: 78, cacheRead: 0, cacheWrite: null, totalTokens: 93 });
  });
});

describe("Responses fixtures", () => {
  it("gpt-5.1-codex-max: four turns with encrypted reasoning, three calculator calls and a final answer", async () => {
    const turns = fixtureResponses(fixture("openai-reasoning-encrypted-content.1.chunks.txt"));
    expect(turns).toHaveLength(4);
    server.script(turns);
    const messages: AssistantMessage[] = [];
    for (let turn = 0; turn < 4; turn++) {
      const { events, message } = await collect(responses(), userRequest("compute", { tools: [weatherTool] }));
      expectWellFormed(events);
      messages.push(message);
    }
    const [first, second, third, last] = messages;
    expect(first.content[0]).toMatchObject({
      type: "thinking",
      thinking: expect.stringMatching(/^\*\*Calculating step-by-step using calculator\*\*/),
    });
    const signature = JSON.parse((first.content[0] as { thinkingSignature: string }).thinkingSignature);
    expect(signature.openai.itemId).toBe("rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9");
    expect(signature.openai.reasoningEncryptedContent).toMatch(/^gAAAAAB/);
    expect(toolCalls(first)).toEqual([{ id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator", arguments: { a: 12, b: 7, op: "add" } }]);
    expect(toolCalls(second)).toEqual([{ id: "call_Q6pW65MUgW9vF59BmItYGos3", name: "calculator", arguments: { a: 19, b: 3, op: "multiply" } }]);
    expect(toolCalls(third)).toEqual([{ id: "call_Zl5vIMnD7dVAjgU6FkhmiCZh", name: "calculator", arguments: { a: 57, b: 10, op: "multiply" } }]);
    expect(messages.map((message) => message.stopReason)).toEqual(["toolUse", "toolUse", "toolUse", "stop"]);
    expect(last.content).toEqual([{ type: "text", text: "The final result is **570**.", textSignature: expect.stringContaining("msg_01830d662ab3856501693c32183a488190a612c410a0a39823") }]);
    expect(first.usage).toEqual({ input: 134, output: 28, cacheRead: 0, cacheWrite: null, totalTokens: 162 });
    expect(last.responseId).toBe("resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a");
  });

  it("gpt-5.4 function call through function_call_arguments.delta/.done", async () => {
    server.script(fixtureResponse(fixture("openai-client-tool-search.2.chunks.txt")));
    const { events, message } = await collect(responses(), userRequest("weather", { tools: [weatherTool] }));
    expectWellFormed(events);
    expect(toolCalls(message)).toEqual([{ id: "call_Q7pq6EfVGRnauPLWSSYBGJ1l", name: "get_weather", arguments: { location: "San Francisco, CA", unit: "fahrenheit" } }]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage).toMatchObject({ input: 467, output: 26, totalTokens: 493 });
  });

  it("a stream failing mid-flight (insufficient_quota): error event, not retryable, nothing thrown", async () => {
    server.script(fixtureResponse(fixture("openai-error.1.chunks.txt")));
    const { terminal, message } = await collect(responses(), userRequest());
    expect(terminal.type).toBe("error");
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/You exceeded your current quota/);
    if (terminal.type === "error") expect(terminal.error.retryable).toBe(false);
  });

  it("GitHub Copilot rotating item ids: reasoning and text come through whole (@ai-sdk/openai 3 alone crashes)", async () => {
    server.script(fixtureResponse(fixture("github-copilot-id-rotation.1.chunks.txt")));
    const { events, terminal, message } = await collect(responses(), userRequest("how many r in strawberry"));
    expectWellFormed(events);
    expect(terminal.type).toBe("done");
    expect(message.content).toEqual([
      { type: "thinking", thinking: "**Counting character occurrences**", thinkingSignature: JSON.stringify({ openai: { itemId: "capture-id-3" } }) },
      {
        type: "text",
        text: "There are **3** letter **“r”**s in **“strawberry.”**\n\nBreakdown: **s t r a w b e r r y**  \nYou can see **r** at positions **3, 8, and 9**.",
        textSignature: JSON.stringify({ openai: { itemId: "capture-id-9", phase: "final_answer" } }),
      },
    ]);
    expect(message.stopReason).toBe("stop");
    expect(message.usage).toEqual({ input: 19, output: 105, cacheRead: 0, cacheWrite: null, totalTokens: 124 });
  });

  it("HTTP 400 for an unsupported temperature (code null)", async () => {
    server.script(fixtureResponse(fixture("reasoning-model-temperature-error.json")));
    const { terminal, message } = await collect(responses(), userRequest());
    expect(message.errorMessage).toMatch(/^400 .*'temperature' is not supported with this model/);
    if (terminal.type === "error") expect(terminal.error).toMatchObject({ retryable: false, status: 400 });
  });
});

describe("stableResponsesItemIds", () => {
  async function pipe(text: string, chunkSize: number): Promise<string> {
    const bytes = new TextEncoder().encode(text);
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += chunkSize) controller.enqueue(bytes.slice(offset, offset + chunkSize));
        controller.close();
      },
    });
    return new Response(source.pipeThrough(stableResponsesItemIds())).text();
  }

  it("is a byte-for-byte no-op on a stream with stable ids, however it is chunked", async () => {
    const body = fixtureFrames("openai-reasoning-encrypted-content.1.chunks.txt");
    for (const size of [7, 100, 4096]) expect(await pipe(body, size)).toBe(body);
  });

  it("pins rotated ids to the id announced by output_item.added", async () => {
    const out = await pipe(fixtureFrames("github-copilot-id-rotation.1.chunks.txt"), 13);
    const ids = new Set(
      out
        .split("\n\n")
        .filter((frame) => frame.startsWith("data: {"))
        .map((frame) => JSON.parse(frame.slice(6)))
        .filter((event) => event.output_index === 0)
        .map((event) => event.item_id ?? event.item?.id),
    );
    expect([...ids]).toEqual(["capture-id-3"]);
  });
});

function fixtureFrames(name: string): string {
  const lines = readFileSync(fixture(name), "utf8").split("\n").filter((line) => line.trim() !== "");
  return lines.map((line) => `data: ${line}\n\n`).join("") + "data: [DONE]\n\n";
}

/**
 * createAiSdkModelClient over scripted AI SDK models (MockLanguageModelV4): stream
 * protocol, per-call-id argument buffers, id rotation, abort, failures, reasoning options, cost.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { APICallError } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it, vi } from "vitest";
import { createAiSdkModelClient, reasoningProviderOptions } from "../../src/adapters/model/index.ts";
import type { ModelStreamEvent } from "../../src/core/model-stream.ts";
import { scriptedModel, streamPartsOf } from "../../src/testing/index.ts";
import { collect, userRequest } from "./helpers.ts";

const finish = (unified: "stop" | "tool-calls" | "length" | "other" | "interrupted" = "stop"): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage: { inputTokens: { total: 20, noCache: 15, cacheRead: 5, cacheWrite: undefined }, outputTokens: { total: 7, text: 7, reasoning: undefined } },
});

describe("stream protocol", () => {
  it("text turn: start, text-start/delta/end, done with usage; partial on every non-terminal event", async () => {
    const client = createAiSdkModelClient(scriptedModel([{ text: "hello big world", usage: { input: 12, output: 3, cached: 2 } }]));
    const { events, message } = await collect(client, userRequest());
    expect(events.map((event) => event.type)).toEqual(["start", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "done"]);
    for (const event of events.slice(0, -1)) expect((event as { partial: unknown }).partial).toBe(message);
    expect(message).toMatchObject({ role: "assistant", content: [{ type: "text", text: "hello big world" }], stopReason: "stop", provider: "mock", api: "mock-scripted", model: "mock-model" });
    expect(message.usage).toEqual({ input: 10, output: 3, cacheRead: 2, cacheWrite: null, totalTokens: 15 });
    expect(message.responseId).toBe("resp_mock");
  });

  it("spec v4's finish reason interrupted (the stream ended without its completion signal) is a retryable error; the partial text is kept", async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "half an ans" },
      finish("interrupted"),
    ];
    const { events, message } = await collect(createAiSdkModelClient(scriptedModel([parts])), userRequest());
    const terminal = events.at(-1)!;
    expect(terminal.type).toBe("error");
    expect(terminal.type === "error" && terminal.error.retryable).toBe(true);
    expect(message).toMatchObject({ stopReason: "error", content: [{ type: "text", text: "half an ans" }] });
    expect(message.errorMessage).toMatch(/interrupted/);
  });

  it("interleaved tool-input deltas stay in one buffer per call id (AI SDK #3068 class)", async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: "tool-input-start", id: "a", toolName: "read" },
      { type: "tool-input-start", id: "b", toolName: "write" },
      { type: "tool-input-delta", id: "a", delta: '{"path":' },
      { type: "tool-input-delta", id: "b", delta: '{"path":"out.txt",' },
      { type: "tool-input-delta", id: "a", delta: '"in.txt"}' },
      { type: "tool-input-delta", id: "b", delta: '"content":"x"}' },
      { type: "tool-input-end", id: "a" },
      { type: "tool-input-end", id: "b" },
      finish("tool-calls"),
    ];
    const { events, message } = await collect(createAiSdkModelClient(scriptedModel([parts])), userRequest());
    expect(message.content).toEqual([
      { type: "toolCall", id: "a", name: "read", arguments: { path: "in.txt" } },
      { type: "toolCall", id: "b", name: "write", arguments: { path: "out.txt", content: "x" } },
    ]);
    expect(message.stopReason).toBe("toolUse");
    const deltasOf = (id: string) => events.flatMap((event) => (event.type === "toolcall-delta" && event.id === id ? [event.delta] : [])).join("");
    expect(deltasOf("a")).toBe('{"path":"in.txt"}');
    expect(deltasOf("b")).toBe('{"path":"out.txt","content":"x"}');
    expect(events.filter((event) => event.type === "toolcall-end")).toHaveLength(2);
  });

  it("the provider's final tool-call input wins over the streamed buffer; bad JSON gives {} and argumentsError", async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: "tool-input-start", id: "a", toolName: "read" },
      { type: "tool-input-delta", id: "a", delta: '{"path":"draft"' },
      { type: "tool-call", toolCallId: "a", toolName: "read", input: '{"path":"final.txt"}' },
      { type: "tool-call", toolCallId: "b", toolName: "bash", input: "{not json" },
      finish("tool-calls"),
    ];
    const { events, message } = await collect(createAiSdkModelClient(scriptedModel([parts])), userRequest());
    expect(message.content).toEqual([
      { type: "toolCall", id: "a", name: "read", arguments: { path: "final.txt" } },
      { type: "toolCall", id: "b", name: "bash", arguments: {}, argumentsError: expect.stringMatching(/^not valid JSON \(.+\): \{not json$/) },
    ]);
    expect(events.map((event) => event.type)).toEqual(["start", "toolcall-start", "toolcall-delta", "toolcall-end", "toolcall-start", "toolcall-delta", "toolcall-end", "done"]);
  });

  it("rotating item ids (GitHub Copilot) continue the open block instead of failing", async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: "reasoning-start", id: "r-1", providerMetadata: { openai: { itemId: "r-1" } } },
      { type: "reasoning-delta", id: "r-2", delta: "think " },
      { type: "reasoning-delta", id: "r-3", delta: "hard" },
      { type: "reasoning-end", id: "r-4", providerMetadata: { openai: { itemId: "r-1", reasoningEncryptedContent: "enc" } } },
      { type: "text-start", id: "t-1" },
      { type: "text-delta", id: "t-2", delta: "An" },
      { type: "text-delta", id: "t-3", delta: "swer" },
      { type: "text-end", id: "t-4" },
      finish(),
    ];
    const { events, message } = await collect(createAiSdkModelClient(scriptedModel([parts])), userRequest());
    expect(message.content).toEqual([
      { type: "thinking", thinking: "think hard", thinkingSignature: JSON.stringify({ openai: { itemId: "r-1", reasoningEncryptedContent: "enc" } }) },
      { type: "text", text: "Answer" },
    ]);
    expect(events.map((event) => event.type)).toEqual(["start", "thinking-start", "thinking-delta", "thinking-delta", "thinking-end", "text-start", "text-delta", "text-delta", "text-end", "done"]);
  });

  it("finish reasons: length, other without calls → stop, stop with calls → toolUse", async () => {
    const model = scriptedModel([
      [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "cut" }, finish("length")],
      [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "ok" }, finish("other")],
      [{ type: "tool-call", toolCallId: "c", toolName: "ls", input: "{}" }, finish("stop")],
    ]);
    const client = createAiSdkModelClient(model);
    expect((await collect(client, userRequest())).message.stopReason).toBe("length");
    expect((await collect(client, userRequest())).message.stopReason).toBe("stop");
    expect((await collect(client, userRequest())).message.stopReason).toBe("toolUse");
  });
});

describe("failures are data", () => {
  it("an HTTP error from doStream → one error event with retry facts", async () => {
    const error = new APICallError({ message: "Rate limited", url: "http://127.0.0.1/v1", requestBodyValues: {}, statusCode: 429, responseHeaders: { "retry-after": "3" } });
    const { events, terminal, message } = await collect(createAiSdkModelClient(scriptedModel([error])), userRequest());
    expect(events.map((event) => event.type)).toEqual(["start", "error"]);
    expect(terminal.type === "error" && terminal.error).toEqual({ retryable: true, status: 429, retryAfterMs: 3000 });
    expect(message).toMatchObject({ stopReason: "error", errorMessage: "429 Rate limited", content: [] });
  });

  it("a stream that ends without a finish part → retryable error, content kept", async () => {
    const parts: LanguageModelV4StreamPart[] = [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "partial" }];
    const { events, terminal, message } = await collect(createAiSdkModelClient(scriptedModel([parts])), userRequest());
    expect(events.map((event) => event.type)).toEqual(["start", "text-start", "text-delta", "text-end", "error"]);
    expect(message.content).toEqual([{ type: "text", text: "partial" }]);
    expect(message.errorMessage).toMatch(/ended without a finish/);
    expect(terminal.type === "error" && terminal.error.retryable).toBe(true);
  });

  it("a model whose doStream throws synchronously, and an invalid prompt, still end with an error event", async () => {
    const throwing = new MockLanguageModelV4({
      doStream: () => {
        throw new Error("kaboom");
      },
    });
    const first = await collect(createAiSdkModelClient(throwing), userRequest());
    expect(first.message).toMatchObject({ stopReason: "error", errorMessage: "kaboom" });
    const empty = await collect(createAiSdkModelClient(scriptedModel([{ text: "never" }])), { messages: [], tools: [] });
    expect(empty.message.stopReason).toBe("error");
    expect(empty.message.errorMessage).toMatch(/messages/i);
  });
});

describe("abort", () => {
  it("mid-stream: stopReason aborted, 'Request was aborted', partial text kept", async () => {
    const client = createAiSdkModelClient(scriptedModel([{ hangAfter: { text: "partial answer" } }]));
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of client.stream(userRequest(), { signal: controller.signal })) {
      events.push(event);
      if (event.type === "text-delta" && event.delta === "answer") controller.abort();
    }
    const terminal = events[events.length - 1];
    expect(terminal.type).toBe("error");
    if (terminal.type !== "error") return;
    expect(terminal.message).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted", content: [{ type: "text", text: "partial answer" }] });
    expect(terminal.error.retryable).toBe(false);
    expect(events.filter((event) => event.type === "done" || event.type === "error")).toHaveLength(1);
  });

  it("ends even when the model ignores the signal", async () => {
    let release: () => void = () => undefined;
    const deaf = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-start", id: "t" });
            controller.enqueue({ type: "text-delta", id: "t", delta: "x" });
            release = () => {
              try {
                controller.close();
              } catch {
                /* already cancelled by the adapter */
              }
            };
          },
        }),
      }),
    });
    const controller = new AbortController();
    const types: string[] = [];
    for await (const event of createAiSdkModelClient(deaf).stream(userRequest(), { signal: controller.signal })) {
      types.push(event.type);
      if (event.type === "text-delta") controller.abort();
    }
    release();
    expect(types).toEqual(["start", "text-start", "text-delta", "text-end", "error"]);
  });

  it("an already-aborted signal makes no model call", async () => {
    const model = scriptedModel([{ text: "unused" }]);
    const { message } = await collect(createAiSdkModelClient(model), userRequest(), { signal: AbortSignal.abort() });
    expect(message.stopReason).toBe("aborted");
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it("timeoutMs ends a hanging call with a retryable timeout error", async () => {
    const { terminal, message } = await collect(createAiSdkModelClient(scriptedModel(["hang"])), userRequest("hi", { timeoutMs: 50 }));
    expect(message).toMatchObject({ stopReason: "error", errorMessage: "Model request timed out after 50 ms" });
    expect(terminal.type === "error" && terminal.error.retryable).toBe(true);
  });
});

describe("idle timeout", () => {
  it("a stream that stalls after some text ends with a retryable error, text kept; a flowing stream is not cut", async () => {
    const stalled = await collect(createAiSdkModelClient(scriptedModel([{ hangAfter: { text: "so far" } }]), { idleTimeoutMs: 50 }), userRequest());
    expect(stalled.message).toMatchObject({ stopReason: "error", content: [{ type: "text", text: "so far" }] });
    expect(stalled.message.errorMessage).toMatch(/sent nothing for 50 ms/);
    expect(stalled.terminal.type === "error" && stalled.terminal.error.retryable).toBe(true);
    const flowing = await collect(createAiSdkModelClient(scriptedModel([{ text: "all good" }]), { idleTimeoutMs: 60_000 }), userRequest());
    expect(flowing.message.stopReason).toBe("stop");
  });

  it("is on by default: a stream silent for 120 s ends with its own retryable idle-timeout error", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const pending = collect(createAiSdkModelClient(scriptedModel([{ hangAfter: { text: "half" } }])), userRequest());
      await vi.advanceTimersByTimeAsync(119_000);
      let settled = false;
      void pending.then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(2_000);
      const stalled = await pending;
      expect(stalled.message).toMatchObject({ stopReason: "error", content: [{ type: "text", text: "half" }] });
      expect(stalled.message.errorMessage).toMatch(/^Idle timeout: the model sent nothing for 120000 ms/);
      expect(stalled.terminal.type === "error" && stalled.terminal.error.retryable).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("idleTimeoutMs 0 turns it off", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const controller = new AbortController();
      const pending = collect(createAiSdkModelClient(scriptedModel([{ hangAfter: { text: "half" } }]), { idleTimeoutMs: 0 }), userRequest(), { signal: controller.signal });
      await vi.advanceTimersByTimeAsync(600_000);
      controller.abort();
      expect((await pending).message.stopReason).toBe("aborted");
    } finally {
      vi.useRealTimers();
    }
  });

  it("time the consumer spends on an event does not count as model silence", async () => {
    const client = createAiSdkModelClient(scriptedModel([{ text: "one two three" }]), { idleTimeoutMs: 30 });
    let last: ModelStreamEvent | undefined;
    for await (const event of client.stream(userRequest(), {})) {
      last = event;
      await new Promise((resolve) => setTimeout(resolve, 60)); // a slow consumer, e.g. a blocked writer
    }
    expect(last?.type).toBe("done");
  });
});

describe("request building", () => {
  it("sends the system prompt, converted messages, function tools, caps and headers", async () => {
    const model = scriptedModel([{ text: "ok" }], { provider: "openai.chat" });
    await collect(createAiSdkModelClient(model), {
      systemPrompt: "be brief",
      messages: [{ role: "user", content: "hi", timestamp: 0 }],
      tools: [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
      maxTokens: 100,
      temperature: 0.2,
      headers: { "x-secret": "s3cr3t" },
    });
    const call = model.doStreamCalls[0];
    expect(call.prompt).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "text", text: "hi" }] },
    ]);
    expect(call.tools).toEqual([{ type: "function", name: "read", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }]);
    expect(call.toolChoice).toEqual({ type: "auto" });
    expect(call).toMatchObject({ maxOutputTokens: 100, temperature: 0.2, headers: { "x-secret": "s3cr3t" } });
  });

  it("maps thinking levels to OpenAI reasoning options; off and reasoning:false send none; request options win", async () => {
    const model = scriptedModel(Array.from({ length: 5 }, () => ({ text: "ok" })), { provider: "openai.responses" });
    const client = createAiSdkModelClient(model);
    await collect(client, userRequest("a", { thinkingLevel: "xhigh" }));
    await collect(client, userRequest("b", { thinkingLevel: "off" }));
    await collect(client, userRequest("c", { thinkingLevel: "low", providerOptions: { openai: { reasoningEffort: "medium" } } }));
    await collect(createAiSdkModelClient(model, { reasoning: false }), userRequest("d", { thinkingLevel: "high" }));
    await collect(createAiSdkModelClient(model, { thinkingLevelMap: { xhigh: "xhigh" } }), userRequest("e", { thinkingLevel: "xhigh" }));
    const options = model.doStreamCalls.map((call) => call.providerOptions);
    expect(options).toEqual([
      { openai: { reasoningEffort: "high", reasoningSummary: "auto" } },
      undefined,
      { openai: { reasoningEffort: "medium", reasoningSummary: "auto" } },
      undefined,
      { openai: { reasoningEffort: "xhigh", reasoningSummary: "auto" } },
    ]);
  });

  it("Anthropic-style signed and redacted thinking round-trips into the next call's prompt", async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: "reasoning-start", id: "r0" },
      { type: "reasoning-delta", id: "r0", delta: "weighing options" },
      { type: "reasoning-end", id: "r0", providerMetadata: { anthropic: { signature: "sig-123" } } },
      { type: "reasoning-start", id: "r1", providerMetadata: { anthropic: { redactedData: "opaque==" } } },
      { type: "reasoning-end", id: "r1" },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Answer." },
      { type: "text-end", id: "t" },
      finish(),
    ];
    const model = scriptedModel([parts, { text: "again" }], { provider: "anthropic.messages", modelId: "claude-test" });
    const client = createAiSdkModelClient(model);
    const first = await collect(client, userRequest("think", { thinkingLevel: "medium" }));
    expect(first.message.content).toEqual([
      { type: "thinking", thinking: "weighing options", thinkingSignature: JSON.stringify({ anthropic: { signature: "sig-123" } }) },
      { type: "thinking", thinking: "", thinkingSignature: JSON.stringify({ anthropic: { redactedData: "opaque==" } }), redacted: true },
      { type: "text", text: "Answer." },
    ]);
    await collect(client, { messages: [{ role: "user", content: "think", timestamp: 0 }, first.message, { role: "user", content: "more", timestamp: 0 }], tools: [] });
    const assistant = model.doStreamCalls[1].prompt[1];
    expect(assistant).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "weighing options", providerOptions: { anthropic: { signature: "sig-123" } } },
        { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque==" } } },
        { type: "text", text: "Answer." },
      ],
    });
    expect(model.doStreamCalls[0].providerOptions).toEqual({ anthropic: { thinking: { type: "enabled", budgetTokens: 8192 } } });
  });

  it("reasoningProviderOptions for other providers", () => {
    expect(reasoningProviderOptions("openai.chat", "minimal")).toEqual({ openai: { reasoningEffort: "minimal" } });
    expect(reasoningProviderOptions("anthropic.messages", "medium")).toEqual({ anthropic: { thinking: { type: "enabled", budgetTokens: 8192 } } });
    expect(reasoningProviderOptions("google.generative-ai", "low")).toEqual({ google: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } } });
    expect(reasoningProviderOptions("mistral.chat", "high")).toBeUndefined();
    expect(reasoningProviderOptions("openai.chat", undefined)).toBeUndefined();
  });

  it("computes cost from $ per million token prices; no prices → no cost", async () => {
    const parts = streamPartsOf({ text: "x", usage: { input: 1_000_000, output: 500_000, cached: 200_000 } });
    const client = createAiSdkModelClient(scriptedModel([parts, parts]), { cost: { input: 2, output: 8, cacheRead: 0.5 } });
    const { message } = await collect(client, userRequest());
    expect(message.usage).toMatchObject({ input: 800_000, output: 500_000, cacheRead: 200_000, totalTokens: 1_500_000 });
    const cost = message.usage.cost!;
    expect(cost.input).toBeCloseTo(1.6, 10);
    expect(cost.output).toBeCloseTo(4, 10);
    expect(cost.cacheRead).toBeCloseTo(0.1, 10);
    expect(cost.cacheWrite).toBe(0);
    expect(cost.total).toBeCloseTo(5.7, 10);
    const plain = await collect(createAiSdkModelClient(scriptedModel([parts])), userRequest());
    expect(plain.message.usage.cost).toBeUndefined();
  });
});

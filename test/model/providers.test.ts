/**
 * Anthropic and Google through their own AI SDK packages (`@ai-sdk/anthropic`, `@ai-sdk/google`),
 * on the real wire: real HTTP to the loopback server speaking Anthropic Messages SSE and Gemini
 * `streamGenerateContent` SSE, scripted and recorded (test/fixtures/providers, from vercel/ai).
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicModel, createGoogleModel, createModel, defaultOpenAIWire } from "../../src/adapters/model/index.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import type { AssistantMessage } from "../../src/core/messages.ts";
import { errorResponse, fixtureResponse, startOpenAIServer, textResponse, turnResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { collect, fixture, userRequest } from "./helpers.ts";

const PROVIDER_FIXTURES = join(import.meta.dirname, "../fixtures/providers");
const recorded = (name: string) => fixtureResponse(join(PROVIDER_FIXTURES, name));
const KEY = "sk-ant-test-SECRET-123456";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  expect(server.remaining()).toBe(0);
  await server.close();
});

const anthropic = (extra: Record<string, unknown> = {}) => createAnthropicModel({ modelId: "claude-test", baseURL: server.url, apiKey: KEY, ...extra });
const google = (extra: Record<string, unknown> = {}) => createGoogleModel({ modelId: "gemini-test", baseURL: server.url, apiKey: KEY, ...extra });
const readTool = { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };

function withEnv(values: Record<string, string | undefined>, run: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  return run().finally(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

describe("Anthropic Messages (@ai-sdk/anthropic)", () => {
  it("streams text to POST /v1/messages with x-api-key; provider anthropic, api anthropic-messages", async () => {
    server.script(textResponse("Hello from Claude", { id: "msg_1", model: "claude-test-20260101" }));
    const { message, events } = await collect(anthropic(), userRequest("hi", { systemPrompt: "Be brief." }));
    expect(message).toMatchObject({ role: "assistant", provider: "anthropic", api: "anthropic-messages", model: "claude-test", stopReason: "stop", responseId: "msg_1" });
    expect(message.content).toEqual([{ type: "text", text: "Hello from Claude" }]);
    expect(events.filter((event) => event.type === "text-delta").length).toBeGreaterThan(1);
    const request = server.requests[0];
    expect(request.path).toBe("/v1/messages");
    expect(request.headers["x-api-key"]).toBe(KEY);
    expect(request.body).toMatchObject({ model: "claude-test", stream: true, system: [{ type: "text", text: "Be brief." }] });
  });

  it("tool calls and signed thinking come back and go out again: tool_use / tool_result and the thinking signature", async () => {
    server.script(
      turnResponse({ reasoning: "Need the file.", encryptedReasoning: "SIG-abc", text: "Reading.", toolCalls: [{ id: "toolu_1", name: "read", arguments: { path: "a.txt" } }] }),
      textResponse("Done."),
    );
    const client = anthropic();
    const first = await collect(client, userRequest("read a.txt", { tools: [readTool], thinkingLevel: "low" }));
    expect(first.message.stopReason).toBe("toolUse");
    expect(first.message.content.map((block) => block.type)).toEqual(["thinking", "text", "toolCall"]);
    expect(first.message.content[0]).toMatchObject({ type: "thinking", thinking: "Need the file." });
    expect(first.message.content[2]).toMatchObject({ type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.txt" } });
    expect(server.requests[0].body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });

    const messages = [
      ...userRequest("read a.txt").messages,
      first.message,
      { role: "toolResult" as const, toolCallId: "toolu_1", toolName: "read", content: [{ type: "text" as const, text: "contents" }], isError: false, timestamp: 1 },
    ];
    const second = await collect(client, { messages, tools: [readTool], thinkingLevel: "low" });
    expect(second.message.content).toEqual([{ type: "text", text: "Done." }]);
    const sent = server.requests[1].body.messages as { role: string; content: Record<string, unknown>[] }[];
    expect(sent[1].content).toEqual([
      { type: "thinking", thinking: "Need the file.", signature: "SIG-abc" },
      { type: "text", text: "Reading." },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } },
    ]);
    expect(sent[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1" });
  });

  it("replays recorded streams: text, a no-argument tool call, and a prompt-cached turn whose cache counts lie outside input_tokens", async () => {
    server.script(recorded("anthropic-text.chunks.txt"), recorded("anthropic-tool-no-args.chunks.txt"), recorded("anthropic-code-execution-20260120-prompt-cache.1.chunks.txt"));
    const cost = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    const client = anthropic({ cost });
    const text = (await collect(client, userRequest())).message;
    expect(text.content).toEqual([{ type: "text", text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?" }]);
    expect(text).toMatchObject({ stopReason: "stop", responseModel: "claude-sonnet-4-5-20250929" });
    expect(text.usage).toMatchObject({ input: 12, output: 30, cacheRead: 0, cacheWrite: 0, totalTokens: 42 });

    const tool = (await collect(client, userRequest("update", { tools: [{ name: "updateIssueList", description: "", parameters: { type: "object", properties: {} } }] }))).message;
    expect(tool.stopReason).toBe("toolUse");
    expect(tool.content).toEqual([
      { type: "text", text: "I'll update the issue list for you." },
      { type: "toolCall", id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", arguments: {} },
    ]);

    const cached = (await collect(client, userRequest())).message;
    expect(cached.content.filter((block) => block.type === "text")).toEqual([{ type: "text", text: "The sum of the squares of the numbers 1 through 12 is **650**." }]);
    // input_tokens (6) already excludes the 6289 read and 3337 written cache tokens: nothing is subtracted or added twice.
    expect(cached.usage).toMatchObject({ input: 6, output: 198, cacheRead: 6289, cacheWrite: 3337, totalTokens: 6 + 198 + 6289 + 3337 });
    expect(cached.usage.cost?.total).toBeCloseTo((6 * 3 + 198 * 15 + 6289 * 0.3 + 3337 * 3.75) / 1e6, 12);
  });

  it("a missing key fails the call naming ANTHROPIC_API_KEY, without an HTTP request; ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read at call time", async () => {
    await withEnv({ ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: server.url }, async () => {
      const client = createAnthropicModel({ modelId: "claude-test" });
      const { terminal, message } = await collect(client, userRequest());
      expect(message.errorMessage).toMatch(/ANTHROPIC_API_KEY/);
      expect(terminal.type === "error" && terminal.error.retryable).toBe(false);
      expect(server.requests).toHaveLength(0);
      process.env.ANTHROPIC_API_KEY = "sk-ant-from-env";
      server.script(textResponse("env ok"));
      expect((await collect(client, userRequest())).message.content).toEqual([{ type: "text", text: "env ok" }]);
      expect(server.requests[0].headers["x-api-key"]).toBe("sk-ant-from-env");
    });
  });

  it("an echoed key never reaches the error message; 529 overloaded is retryable", async () => {
    server.script(
      errorResponse(401, { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` } }),
      errorResponse(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    );
    const denied = await collect(anthropic(), userRequest());
    expect(denied.message.errorMessage).toContain("[redacted]");
    expect(denied.message.errorMessage).not.toContain(KEY);
    const overloaded = await collect(anthropic(), userRequest());
    expect(overloaded.terminal.type === "error" && overloaded.terminal.error.retryable).toBe(true);
  });
});

describe("Gemini (@ai-sdk/google)", () => {
  it("streams text, thinking and a tool call from POST /v1/models/<id>:streamGenerateContent with x-goog-api-key", async () => {
    server.script(turnResponse({ reasoning: "Look it up.", text: "Checking.", toolCalls: [{ id: "ignored", name: "read", arguments: { path: "b.txt" } }] }));
    const { message } = await collect(google(), userRequest("read b.txt", { tools: [readTool], systemPrompt: "Be brief.", thinkingLevel: "medium" }));
    expect(message).toMatchObject({ provider: "google", api: "google-generative-ai", model: "gemini-test", stopReason: "toolUse" });
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "toolCall"]);
    expect(message.content[2]).toMatchObject({ name: "read", arguments: { path: "b.txt" } });
    const request = server.requests[0];
    expect(request.path).toBe("/v1/models/gemini-test:streamGenerateContent");
    expect(request.headers["x-goog-api-key"]).toBe(KEY);
    expect(request.body.systemInstruction).toEqual({ parts: [{ text: "Be brief." }] });
    expect(request.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8192, includeThoughts: true });
  });

  it("replays recorded streams: a signed function call, and usage where cached tokens are inside promptTokenCount and thoughts outside the candidates", async () => {
    server.script(recorded("google-tool-call.chunks.txt"), recorded("google-usage-raw-live.sse"));
    const client = google({ cost: { input: 0.3, output: 2.5, cacheRead: 0.075 } });
    const call = (await collect(client, userRequest("weather?", { tools: [{ name: "weather", description: "", parameters: { type: "object", properties: { location: { type: "string" } } } }] }))).message;
    expect(call.stopReason).toBe("toolUse");
    expect(call.content).toHaveLength(1);
    expect(call.content[0]).toMatchObject({ type: "toolCall", name: "weather", arguments: { location: "San Francisco" } });
    expect(call.usage).toMatchObject({ input: 29, output: 15 + 45, cacheRead: null, cacheWrite: null, totalTokens: 89 });

    const usage = (await collect(client, userRequest())).message.usage;
    // 12 prompt tokens of which 4 cached, 65 tool-use prompt tokens, 71 + 89 output: Gemini's own total, 237.
    expect(usage).toMatchObject({ input: 12 - 4 + 65, cacheRead: 4, cacheWrite: null, output: 71 + 89, totalTokens: 237 });
    expect(usage.cost?.total).toBeCloseTo((73 * 0.3 + 160 * 2.5 + 4 * 0.075) / 1e6, 12);
  });

  it("a missing key names GOOGLE_GENERATIVE_AI_API_KEY; pi's GEMINI_API_KEY is accepted too", async () => {
    await withEnv({ GOOGLE_GENERATIVE_AI_API_KEY: undefined, GEMINI_API_KEY: undefined, GOOGLE_GENERATIVE_AI_BASE_URL: server.url }, async () => {
      const client = createGoogleModel({ modelId: "gemini-test" });
      const missing = await collect(client, userRequest());
      expect(missing.message.errorMessage).toMatch(/GOOGLE_GENERATIVE_AI_API_KEY/);
      expect(server.requests).toHaveLength(0);
      process.env.GEMINI_API_KEY = "gemini-from-env";
      server.script(textResponse("env ok"));
      expect((await collect(client, userRequest())).message.content).toEqual([{ type: "text", text: "env ok" }]);
      expect(server.requests[0].headers["x-goog-api-key"]).toBe("gemini-from-env");
    });
  });
});

describe("one usage, three wire shapes", () => {
  // 10,000 prompt tokens: 8,000 read from the cache, 1,500 written to it, 500 fresh; 300 out.
  const usage = { input: 10_000, cached: 8_000, cacheWrite: 1_500, output: 300 };
  const cost = { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 };

  it("OpenAI Chat, Anthropic and Gemini report the same Arbor usage and cost (peers over-count Anthropic by adding the cache again)", async () => {
    const clients: [string, () => ReturnType<typeof createModel>][] = [
      ["openai-chat", () => createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: KEY, api: "chat", cost })],
      ["anthropic", () => createModel("anthropic", { modelId: "claude-test", baseURL: server.url, apiKey: KEY, cost })],
    ];
    const results: Record<string, AssistantMessage["usage"]> = {};
    for (const [name, client] of clients) {
      server.script(textResponse("ok", { usage }));
      results[name] = (await collect(client(), userRequest())).message.usage;
    }
    const expected = { input: 500, cacheRead: 8_000, cacheWrite: 1_500, output: 300, totalTokens: 10_300 };
    expect(results["openai-chat"]).toMatchObject(expected);
    expect(results.anthropic).toMatchObject(expected);
    expect(results.anthropic.cost).toEqual(results["openai-chat"].cost);
    expect(results.anthropic.cost?.total).toBeCloseTo((500 * 2 + 300 * 10 + 8_000 * 0.2 + 1_500 * 2.5) / 1e6, 12);

    // Gemini has no cache writes (its caching is implicit or explicit, never billed as a write).
    server.script(textResponse("ok", { usage: { input: 10_000, cached: 8_000, output: 300, reasoning: 100 } }));
    const gemini = (await collect(createModel("google", { modelId: "gemini-test", baseURL: server.url, apiKey: KEY, cost }), userRequest())).message.usage;
    expect(gemini).toMatchObject({ input: 2_000, cacheRead: 8_000, cacheWrite: null, output: 300, totalTokens: 10_300 });
  });
});

describe("the wire rule shared by createOpenAIModel and the CLI", () => {
  it("Chat Completions when a base URL is given, else Responses; an explicit api wins", async () => {
    expect(defaultOpenAIWire(undefined)).toBe("responses");
    expect(defaultOpenAIWire(server.url)).toBe("chat");
    server.script(textResponse("chat"), textResponse("responses"));
    const implicit = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: KEY });
    expect(implicit.api).toBe("openai-chat");
    await collect(implicit, userRequest());
    await collect(createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: KEY, api: "responses" }), userRequest());
    expect(server.requests.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/responses"]);
    await withEnv({ OPENAI_BASE_URL: undefined }, async () => {
      expect(createOpenAIModel({ modelId: "gpt-test" }).api).toBe("openai-responses");
    });
  });

  it("Claude behind an OpenAI-compatible gateway (recorded) works through a base URL on Chat Completions", async () => {
    server.script(fixtureResponse(fixture("anthropic-fallback-tool-call.sse")));
    const { message } = await collect(createModel("openai", { modelId: "claude-haiku-4-5", baseURL: server.url, apiKey: KEY }), userRequest("read it", { tools: [readTool] }));
    expect(server.requests[0].path).toBe("/v1/chat/completions");
    expect(message.stopReason).toBe("toolUse");
    expect(message.content[0]).toEqual({ type: "text", text: "Reading it." });
    expect(message.content[1]).toEqual({ type: "toolCall", id: "toolu_sanitized", name: "read_file", arguments: { path: "a.txt" } });
    expect(message.usage).toMatchObject({ input: null, output: null, totalTokens: null });
  });
});

/**
 * Retry and overflow facts: over real HTTP with the real @ai-sdk/openai client, plus
 * unit cases, plus a differential check of the overflow patterns against pi 0.73.1.
 */
import { createServer } from "node:net";
import { isContextOverflow } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyModelError, createOpenAIModel, parseRetryAfterMs } from "../../src/adapters/model/index.ts";
import { isContextOverflowMessage } from "../../src/core/context-overflow.ts";
import type { ModelErrorInfo } from "../../src/core/model-stream.ts";
import type { OpenAIServer } from "../../src/testing/index.ts";
import { errorResponse, resetResponse, startOpenAIServer, streamErrorResponse } from "../../src/testing/index.ts";
import { collect, userRequest } from "./helpers.ts";

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
});

async function errorOf(api: "chat" | "responses" = "chat", baseURL = server.url): Promise<{ info: ModelErrorInfo; errorMessage: string | undefined; text: string }> {
  const model = createOpenAIModel({ modelId: "gpt-test", baseURL, apiKey: "test-key", api });
  const { terminal, message } = await collect(model, userRequest());
  if (terminal.type !== "error") throw new Error(`expected an error, got ${terminal.type}`);
  expect(message.stopReason).toBe("error");
  const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  return { info: terminal.error, errorMessage: message.errorMessage, text };
}

/** OpenAI's real context-length error body (Chat Completions). */
const CONTEXT_LENGTH_BODY = {
  error: {
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130567 tokens. Please reduce the length of the messages.",
    type: "invalid_request_error",
    param: "messages",
    code: "context_length_exceeded",
  },
};

describe("retry facts over HTTP", () => {
  it("429 with Retry-After seconds → retryable, retryAfterMs", async () => {
    server.script(errorResponse(429, { error: { message: "Rate limit reached for gpt-test", type: "requests", code: "rate_limit_exceeded" } }, { "retry-after": "7" }));
    const { info, errorMessage } = await errorOf();
    expect(info).toEqual({ retryable: true, status: 429, retryAfterMs: 7000 });
    expect(errorMessage).toBe("429 Rate limit reached for gpt-test");
  });

  it("429 with retry-after-ms wins over Retry-After", async () => {
    server.script(errorResponse(429, { error: { message: "Rate limit reached", type: "requests" } }, { "retry-after-ms": "1500.5", "retry-after": "9" }));
    expect((await errorOf("responses")).info).toEqual({ retryable: true, status: 429, retryAfterMs: 1501 });
  });

  it("503 overloaded → retryable", async () => {
    server.script(errorResponse(503, { error: { message: "The engine is currently overloaded, please try again later", type: "server_error" } }));
    expect((await errorOf()).info).toEqual({ retryable: true, status: 503 });
  });

  it("500 when the test server's script is exhausted → retryable, with a clear message", async () => {
    const { info, errorMessage } = await errorOf();
    expect(info).toEqual({ retryable: true, status: 500 });
    expect(errorMessage).toMatch(/no scripted response left/);
  });

  it("connection refused on a closed port → retryable, no status", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { info, errorMessage } = await errorOf("chat", `http://127.0.0.1:${port}/v1`);
    expect(info).toEqual({ retryable: true });
    expect(errorMessage).toMatch(/ECONNREFUSED|connect/i);
  });

  it("connection reset mid-stream → retryable, partial text kept", async () => {
    server.script(resetResponse("Hello there, partial"));
    const { info, text } = await errorOf();
    expect(info.retryable).toBe(true);
    expect(text).toBe("Hello there, partial");
  });

  it("a provider error event mid-stream (server_error) → retryable, partial text kept", async () => {
    server.script(streamErrorResponse({ message: "The server had an error while processing your request.", type: "server_error" }, "Half an ans"));
    const { info, text, errorMessage } = await errorOf();
    expect(info.retryable).toBe(true);
    expect(text).toBe("Half an ans");
    expect(errorMessage).toMatch(/The server had an error/);
  });

  it("400 invalid request → not retryable", async () => {
    server.script(errorResponse(400, { error: { message: "Invalid 'messages[0].content': string too long.", type: "invalid_request_error" } }));
    expect((await errorOf()).info).toEqual({ retryable: false, status: 400 });
  });

  it("context-length error body (Chat) → contextOverflow, not retryable", async () => {
    server.script(errorResponse(400, CONTEXT_LENGTH_BODY));
    const { info, errorMessage } = await errorOf();
    expect(info).toEqual({ retryable: false, status: 400, contextOverflow: true });
    expect(errorMessage).toMatch(/maximum context length is 128000 tokens/);
  });

  it("context-window error body (Responses wording) → contextOverflow", async () => {
    server.script(
      errorResponse(400, { error: { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", param: "input", code: "context_length_exceeded" } }),
    );
    expect((await errorOf("responses")).info).toEqual({ retryable: false, status: 400, contextOverflow: true });
  });

  it("429 insufficient_quota → not retryable (waiting does not refill a quota)", async () => {
    server.script(errorResponse(429, { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } }));
    expect((await errorOf()).info).toEqual({ retryable: false, status: 429 });
  });
});

describe("classifyModelError", () => {
  it("handles plain values without throwing", () => {
    for (const value of [undefined, null, "boom", 42, { weird: true }, new Error(""), Object.create(null)]) {
      const result = classifyModelError(value);
      expect(typeof result.message).toBe("string");
      expect(result.message.length).toBeGreaterThan(0);
    }
  });

  it("aborted wins over everything", () => {
    expect(classifyModelError(Object.assign(new Error("x"), { statusCode: 503 }), { aborted: true })).toMatchObject({ aborted: true, retryable: false, message: "Request was aborted" });
  });

  it("network codes in the cause chain and timeouts are retryable", () => {
    const reset = new TypeError("terminated", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
    expect(classifyModelError(reset).retryable).toBe(true);
    const timeout = new DOMException("The operation timed out.", "TimeoutError");
    expect(classifyModelError(timeout).retryable).toBe(true);
    expect(classifyModelError(new Error("socket hang up")).retryable).toBe(true);
    expect(classifyModelError(new Error("Invalid JSON response")).retryable).toBe(false);
  });

  it("reads nested provider error objects ({ error: { message, code } })", () => {
    const result = classifyModelError({ type: "error", error: { code: "context_length_exceeded", message: "prompt is too long: 213462 tokens > 200000 maximum" } });
    expect(result).toMatchObject({ message: "prompt is too long: 213462 tokens > 200000 maximum", contextOverflow: true, retryable: false });
  });

  it("413 is an overflow (request too large)", () => {
    expect(classifyModelError(Object.assign(new Error("Request Entity Too Large"), { statusCode: 413, responseBody: "" }))).toMatchObject({ contextOverflow: true, retryable: false, status: 413 });
  });
});

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2026-11-30T10:00:00Z");
  it("seconds, fractional ms, HTTP dates, and garbage", () => {
    expect(parseRetryAfterMs({ "Retry-After": "2" }, now)).toBe(2000);
    expect(parseRetryAfterMs({ "retry-after-ms": "250" }, now)).toBe(250);
    expect(parseRetryAfterMs({ "retry-after": "Mon, 30 Nov 2026 10:00:30 GMT" }, now)).toBe(30_000);
    expect(parseRetryAfterMs({ "retry-after": "Mon, 30 Nov 2026 09:00:00 GMT" }, now)).toBe(0);
    expect(parseRetryAfterMs({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(parseRetryAfterMs({ "retry-after-ms": "-5", "retry-after": "1" }, now)).toBe(1000);
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
  });
});

describe("isContextOverflowMessage agrees with pi 0.73.1 isContextOverflow (error-message case)", () => {
  const piSays = (text: string) =>
    isContextOverflow(
      { role: "assistant", content: [], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "error", errorMessage: text, timestamp: 0 } as never,
    );

  const wordings = [
    "prompt is too long: 213462 tokens > 200000 maximum",
    '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    "Your input exceeds the context window of this model",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
    "Please reduce the length of the messages or completion",
    "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens",
    "the request exceeds the available context size, try increasing it",
    "tokens to keep from the initial prompt is greater than the context length",
    "prompt token count of 140000 exceeds the limit of 128000",
    "invalid params, context window exceeds limit",
    "Your request exceeded model token limit: 262144 (requested: 300000)",
    "400 status code (no body)",
    "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
    "prompt too long; exceeded max context length by 1200 tokens",
    "ThrottlingException: Too many tokens, please wait before trying again.",
    "Rate limit reached: too many tokens per minute",
    "Too many requests: too many tokens",
    "Service unavailable: prompt is too long",
    "Internal server error",
    "",
  ];

  it.each(wordings)("%s", (text) => {
    expect(isContextOverflowMessage(text)).toBe(piSays(text));
  });

  it("agrees on generated strings mixing pattern fragments", () => {
    const fragments = ["prompt is too long", "rate limit", "too many tokens", "context_length_exceeded", "maximum context length is 5 tokens", "Throttling error: ", "hello", " ", "413 (no body)"];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 4 }), (parts) => {
        const text = parts.join("");
        expect(isContextOverflowMessage(text)).toBe(piSays(text));
      }),
      { numRuns: 300 },
    );
  });
});

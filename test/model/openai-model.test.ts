/**
 * createOpenAIModel over real HTTP: configuration, wire hooks, secrets, abort, thinking
 * options on the wire, and a Responses round trip that sends encrypted reasoning back.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/index.ts";
import { ModelConfigError } from "../../src/core/errors.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import type { ModelStreamEvent } from "../../src/core/model-stream.ts";
import type { OpenAIServer } from "../../src/testing/index.ts";
import { errorResponse, fixtureResponses, hangResponse, startOpenAIServer, textResponse, toolCallResponse, turnResponse } from "../../src/testing/index.ts";
import { collect, fixture, userRequest } from "./helpers.ts";

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  expect(server.remaining()).toBe(0);
});

const model = (api: "chat" | "responses", extra: Record<string, unknown> = {}) => createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "sk-test-secret", api, ...extra });

describe("configuration", () => {
  it("a missing API key does not crash construction; the call fails clearly without any HTTP request", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const before = server.requests.length;
      const client = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url });
      const { terminal, message } = await collect(client, userRequest());
      expect(terminal.type).toBe("error");
      expect(message.stopReason).toBe("error");
      expect(message.errorMessage).toMatch(/OPENAI_API_KEY/);
      expect(terminal.type === "error" && terminal.error.retryable).toBe(false);
      expect(server.requests.length).toBe(before);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it("takes the key and base URL from OPENAI_API_KEY / OPENAI_BASE_URL", async () => {
    const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = "sk-from-env";
    process.env.OPENAI_BASE_URL = server.url;
    try {
      server.script(textResponse("env ok"));
      const { message } = await collect(createOpenAIModel({ modelId: "gpt-test", api: "chat" }), userRequest());
      expect(message.content).toEqual([{ type: "text", text: "env ok" }]);
      expect(server.requests.at(-1)?.headers.authorization).toBe("Bearer sk-from-env");
    } finally {
      for (const [name, value] of [["OPENAI_API_KEY", saved.key], ["OPENAI_BASE_URL", saved.base]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("model-level providerOptions override Arbor's defaults; request options override both", async () => {
    server.script(textResponse("a"), textResponse("b"));
    const client = model("responses", { providerOptions: { openai: { store: true, user: "u-1" } } });
    await collect(client, userRequest());
    await collect(client, userRequest("hi", { providerOptions: { openai: { user: "u-2" } } }));
    const [first, second] = server.requests.slice(-2).map((request) => request.body);
    expect(first).toMatchObject({ store: true, user: "u-1" });
    expect(second).toMatchObject({ store: true, user: "u-2" });
  });

  it("rejects a missing modelId or an unknown api with ModelConfigError", () => {
    expect(() => createOpenAIModel({ modelId: "" })).toThrow(ModelConfigError);
    expect(() => createOpenAIModel({ modelId: "m", api: "completions" as never })).toThrow(/"chat" or "responses"/);
  });

  it("chat uses /v1/chat/completions and api openai-chat; responses uses /v1/responses, store:false", async () => {
    server.script(textResponse("a"), textResponse("b"));
    const chat = await collect(model("chat"), userRequest());
    const responses = await collect(model("responses"), userRequest());
    expect(chat.message.api).toBe("openai-chat");
    expect(responses.message.api).toBe("openai-responses");
    const [first, second] = server.requests.slice(-2);
    expect(first.path).toBe("/v1/chat/completions");
    expect(first.body).toMatchObject({ model: "gpt-test", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(second.path).toBe("/v1/responses");
    expect(second.body).toMatchObject({ model: "gpt-test", stream: true, store: false });
  });
});

describe("hooks and secrets", () => {
  it("onPayload replaces the request body; onResponse sees status and headers", async () => {
    server.script(textResponse("hooked"));
    const seen: { status: number; headers: Record<string, string> }[] = [];
    const payloads: unknown[] = [];
    const { message } = await collect(
      model("chat"),
      userRequest("hi", {
        hooks: {
          onPayload: (payload) => {
            payloads.push(payload);
            return { ...(payload as object), metadata: { tag: "from-hook" }, temperature: 0.5 };
          },
          onResponse: (response) => {
            seen.push(response);
          },
        },
      }),
    );
    expect(message.content).toEqual([{ type: "text", text: "hooked" }]);
    expect(payloads[0]).toMatchObject({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
    expect(server.requests.at(-1)?.body).toMatchObject({ metadata: { tag: "from-hook" }, temperature: 0.5 });
    expect(seen).toHaveLength(1);
    expect(seen[0].status).toBe(200);
    expect(seen[0].headers["content-type"]).toBe("text/event-stream");
  });

  it("onResponse sees error statuses too; a throwing onPayload ends the call with a non-retryable error naming the hook", async () => {
    server.script(errorResponse(503, { error: { message: "busy" } }, { "retry-after": "1" }));
    const statuses: number[] = [];
    const failed = await collect(model("chat"), userRequest("hi", { hooks: { onResponse: ({ status }) => void statuses.push(status) } }));
    expect(statuses).toEqual([503]);
    expect(failed.terminal.type === "error" && failed.terminal.error).toEqual({ retryable: true, status: 503, retryAfterMs: 1000 });

    const before = server.requests.length;
    const thrown = await collect(model("chat"), userRequest("hi", { hooks: { onPayload: () => { throw new Error("policy says no"); } } }));
    expect(thrown.message.errorMessage).toMatch(/onPayload hook failed: policy says no/);
    expect(thrown.terminal.type === "error" && thrown.terminal.error.retryable).toBe(false);
    expect(server.requests.length).toBe(before);
  });

  it("request and model headers reach the server but appear in no event", async () => {
    server.script(errorResponse(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } }));
    const client = model("chat", { headers: { "x-org-secret": "org-secret-value" } });
    const { events } = await collect(client, userRequest("hi", { headers: { "x-request-secret": "request-secret-value" } }));
    const received = server.requests.at(-1)!.headers;
    expect(received["x-org-secret"]).toBe("org-secret-value");
    expect(received["x-request-secret"]).toBe("request-secret-value");
    expect(received.authorization).toBe("Bearer sk-test-secret");
    const serialized = JSON.stringify(events);
    for (const secret of ["org-secret-value", "request-secret-value", "sk-test-secret"]) expect(serialized).not.toContain(secret);
  });
});

describe("abort over HTTP", () => {
  it.each(["chat", "responses"] as const)("%s: abort mid-stream keeps the partial text, stopReason aborted", async (api) => {
    server.script(hangResponse("partial words here"));
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of model(api).stream(userRequest(), { signal: controller.signal })) {
      events.push(event);
      if (event.type === "text-delta" && event.delta === "here") controller.abort();
    }
    const terminal = events.at(-1)!;
    expect(terminal.type).toBe("error");
    if (terminal.type !== "error") return;
    expect(terminal.message).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted", content: [{ type: "text", text: "partial words here" }] });
    expect(terminal.error.retryable).toBe(false);
  });
});

describe("stalls over HTTP", () => {
  it("idleTimeoutMs ends a connection that stops sending, partial text kept, retryable", async () => {
    server.script(hangResponse("stalled here"));
    const { terminal, message } = await collect(model("chat", { idleTimeoutMs: 100 }), userRequest());
    expect(message).toMatchObject({ stopReason: "error", content: [{ type: "text", text: "stalled here" }] });
    expect(terminal.type === "error" && terminal.error.retryable).toBe(true);
  });
});

describe("answers that are not a stream", () => {
  it("a 200 HTML page (a proxy's) is a provider error naming the status, the content type and the first bytes", async () => {
    for (const api of ["chat", "responses"] as const) {
      server.script(errorResponse(200, "<html><body>Please log in to the proxy</body></html>", { "content-type": "text/html; charset=utf-8" }));
      const { terminal, message } = await collect(model(api), userRequest());
      expect(terminal.type).toBe("error");
      expect(message.stopReason).toBe("error");
      expect(message.errorMessage).toContain("HTTP 200");
      expect(message.errorMessage).toContain('"text/html; charset=utf-8"');
      expect(message.errorMessage).toContain("<html><body>Please log in to the proxy");
      expect(terminal.type === "error" && terminal.error.retryable).toBe(false);
    }
  });

  it("an event stream that yields no parts is an error, not an empty answer", async () => {
    for (const api of ["chat", "responses"] as const) {
      server.script({ kind: "body", status: 200, body: "", headers: { "content-type": "text/event-stream" } });
      const { terminal, message } = await collect(model(api), userRequest());
      expect(terminal.type).toBe("error");
      expect(message.errorMessage).toMatch(/yielded no stream parts/);
    }
  });
});

describe("a base URL with user:password@", () => {
  it("sends the credentials as Authorization: Basic and keeps them out of errors", async () => {
    const url = server.url.replace("http://", "http://proxy-user:s3cret%2Fpass@");
    server.script(textResponse("through the proxy"), errorResponse(401, { error: { message: "bad credentials s3cret/pass cHJveHktdXNlcjpzM2NyZXQvcGFzcw==" } }));
    const { message } = await collect(model("chat", { baseURL: url }), userRequest());
    expect(message.content).toEqual([{ type: "text", text: "through the proxy" }]);
    const request = server.requests.at(-1)!;
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from("proxy-user:s3cret/pass").toString("base64")}`);
    const failed = await collect(model("chat", { baseURL: url }), userRequest());
    expect(failed.message.errorMessage).toContain("bad credentials");
    expect(failed.message.errorMessage).not.toContain("s3cret/pass");
    expect(failed.message.errorMessage).not.toContain("cHJveHktdXNlcjpzM2NyZXQvcGFzcw");
  });
});

describe("thinking on the wire", () => {
  it("Responses: effort and summary, encrypted reasoning requested; Chat: reasoning_effort; off sends none", async () => {
    server.script(textResponse("1"), textResponse("2"), textResponse("3"));
    const reasoningModel = (api: "chat" | "responses") => model(api, { modelId: "gpt-5-mini" });
    await collect(reasoningModel("responses"), userRequest("a", { thinkingLevel: "medium" }));
    await collect(reasoningModel("chat"), userRequest("b", { thinkingLevel: "xhigh" }));
    await collect(reasoningModel("responses"), userRequest("c", { thinkingLevel: "off" }));
    const [responses, chat, off] = server.requests.slice(-3).map((request) => request.body);
    expect(responses).toMatchObject({ reasoning: { effort: "medium", summary: "auto" }, include: ["reasoning.encrypted_content"], store: false });
    expect(chat).toMatchObject({ reasoning_effort: "high" });
    expect(off.reasoning).toBeUndefined();
    // (@ai-sdk/openai itself still asks for encrypted reasoning on reasoning models when store is false.)
  });
});

describe("Responses round trip", () => {
  it("sends the encrypted reasoning, the function call and its output back on the next request", async () => {
    const [first] = fixtureResponses(fixture("openai-reasoning-encrypted-content.1.chunks.txt"));
    server.script(first, turnResponse({ text: "The answer is 19." }));
    const client = model("responses", { modelId: "gpt-5.1-codex-max" });
    const tools = [{ name: "calculator", description: "math", parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string" } } } }];
    const turn1 = await collect(client, { messages: [{ role: "user", content: "compute", timestamp: 0 }], tools, thinkingLevel: "high" });
    // The message records the requested model id, so it counts as "same model" and keeps its signatures.
    const history: AgentMessage[] = [
      { role: "user", content: "compute", timestamp: 0 },
      turn1.message,
      { role: "toolResult", toolCallId: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", toolName: "calculator", content: [{ type: "text", text: "19" }], isError: false, timestamp: 0 },
    ];
    const turn2 = await collect(client, { messages: history, tools, thinkingLevel: "high" });
    expect(turn2.message.content).toEqual([{ type: "text", text: "The answer is 19.", textSignature: expect.any(String) }]);
    const input = server.requests.at(-1)!.body.input as Record<string, unknown>[];
    expect(input[0]).toMatchObject({ role: "user" });
    expect(input[1]).toMatchObject({ type: "reasoning", id: "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9", encrypted_content: expect.stringMatching(/^gAAAAAB/) });
    expect(input[2]).toMatchObject({ type: "function_call", call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", name: "calculator" });
    expect(JSON.parse(input[2].arguments as string)).toEqual({ a: 12, b: 7, op: "add" });
    expect(input[3]).toMatchObject({ type: "function_call_output", call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", output: "19" });
  });

  it("Chat: tool calls and results go back as assistant tool_calls and tool messages", async () => {
    server.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "a.txt" } }]), textResponse("done"));
    const client = model("chat");
    const tools = [{ name: "read", description: "read", parameters: { type: "object", properties: { path: { type: "string" } } } }];
    const turn1 = await collect(client, { messages: [{ role: "user", content: "read", timestamp: 0 }], tools });
    expect(turn1.message.content).toEqual([{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }]);
    await collect(client, {
      messages: [{ role: "user", content: "read", timestamp: 0 }, turn1.message, { role: "toolResult", toolCallId: "call_1", toolName: "read", content: [{ type: "text", text: "file body" }], isError: false, timestamp: 0 }],
      tools,
    });
    const body = server.requests.at(-1)!.body;
    expect(body.messages.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "file body" },
    ]);
    expect(body.tools[0]).toMatchObject({ type: "function", function: { name: "read" } });
  });
});

/**
 * OpenAI client edges found by probing: a `baseURL` every request would fail on is refused at
 * construction, and Chat Completions tool-call deltas without an `index` (some compatible servers
 * omit it) still give every call. The real @ai-sdk/openai client against the loopback server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/index.ts";
import { ModelConfigError } from "../../src/core/errors.ts";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/index.ts";
import { collect } from "./helpers.ts";

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
});

describe("createOpenAIModel edges", () => {
  it("refuses a baseURL every request would fail on at construction, naming it", () => {
    for (const baseURL of ["", "  ", "localhost:8080/v1", "ftp://h/v1", "not a url"]) {
      expect(() => createOpenAIModel({ modelId: "m", baseURL, apiKey: "k" }), JSON.stringify(baseURL)).toThrow(ModelConfigError);
      expect(() => createOpenAIModel({ modelId: "m", baseURL, apiKey: "k" })).toThrow(`got ${JSON.stringify(baseURL)}`);
    }
    expect(() => createOpenAIModel({ modelId: "m", baseURL: "http://127.0.0.1:1/v1", apiKey: "k" })).not.toThrow();
  });

  it("Chat: tool-call deltas without an index still give every call", async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    server.script({
      kind: "frames",
      status: 200,
      headers: { "content-type": "text/event-stream" },
      frames: [
        chunk({ role: "assistant", content: null }),
        chunk({ tool_calls: [{ id: "call_a", type: "function", function: { name: "read", arguments: "" } }] }),
        chunk({ tool_calls: [{ function: { arguments: '{"path":' } }] }),
        chunk({ tool_calls: [{ function: { arguments: '"a.txt"}' } }] }),
        chunk({ tool_calls: [{ id: "call_b", type: "function", function: { name: "read", arguments: '{"path":"b.txt"}' } }] }),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
      ],
    });
    const tools = [{ name: "read", description: "read", parameters: { type: "object", properties: { path: { type: "string" } } } }];
    const client = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const { message } = await collect(client, { messages: [{ role: "user", content: "read both", timestamp: 0 }], tools });
    expect(message.stopReason).toBe("toolUse");
    expect(message.content).toEqual([
      { type: "toolCall", id: "call_a", name: "read", arguments: { path: "a.txt" } },
      { type: "toolCall", id: "call_b", name: "read", arguments: { path: "b.txt" } },
    ]);
  });
});

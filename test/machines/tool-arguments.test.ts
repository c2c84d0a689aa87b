/**
 * Tool calls whose arguments are not a JSON object never execute, over the real
 * `@ai-sdk/openai` client and the loopback server: a stream cut mid-arguments and two calls
 * glued into one get an error result naming the JSON failure, even for a tool whose parameters
 * are all optional. Two calls with different ids that share a Chat Completions `index` stay
 * two calls, each with its own arguments (recorded provider streams keep working).
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import type { ToolResultMessage } from "../../src/core/messages.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { fixtureResponse, startOpenAIServer, textResponse, type OpenAIServer, type ScriptedResponse } from "../../src/testing/index.ts";
import { fixture } from "../model/helpers.ts";
import { memorySession } from "./helpers.ts";

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A Chat Completions stream of the given chunks (each gets the usual envelope), then `[DONE]`. */
function chatFrames(chunks: object[]): ScriptedResponse {
  const envelope = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-test" };
  return {
    kind: "frames",
    frames: [...chunks.map((chunk) => `data: ${JSON.stringify({ ...envelope, ...chunk })}\n\n`), "data: [DONE]\n\n"],
    status: 200,
    headers: { "content-type": "text/event-stream" },
  };
}
const callDelta = (delta: object) => ({ choices: [{ index: 0, delta: { tool_calls: [delta] }, finish_reason: null }] });
const start = (index: number, id: string, name: string, args = "") => callDelta({ index, id, type: "function", function: { name, arguments: args } });
const piece = (index: number, args: string) => callDelta({ index, function: { arguments: args } });
const finish = { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] };

async function run(first: ScriptedResponse) {
  server = await startOpenAIServer();
  server.script(first, textResponse("ok"));
  const executed: unknown[] = [];
  const ls = defineTool({
    name: "ls",
    description: "lists a folder",
    parameters: z.object({ path: z.string().optional(), limit: z.number().optional() }),
    async execute(args) {
      executed.push(args);
      return { content: [{ type: "text", text: `listed ${args.path ?? "."}` }] };
    },
  });
  const read = defineTool({
    name: "read",
    description: "reads a file",
    parameters: z.object({ path: z.string() }),
    async execute(args) {
      executed.push(args);
      return { content: [{ type: "text", text: `read ${args.path}` }] };
    },
  });
  const { session } = await memorySession();
  const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
  const outcome = await createAgent({ session, model, tools: [ls, read] }).prompt("go");
  const results = session.view.buildContext().messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
  return { outcome, executed, results, text: (m: ToolResultMessage) => (m.content[0] as { text: string }).text };
}

describe("tool call arguments that are not JSON", () => {
  it("a stream cut mid-arguments: the all-optional tool is not executed; the error names the JSON failure", async () => {
    const { outcome, executed, results, text } = await run(chatFrames([start(0, "call_a", "ls", '{"path":"sr'), finish]));
    expect(outcome.status).toBe("done");
    expect(executed).toEqual([]);
    expect(results).toHaveLength(1);
    expect(results[0].isError).toBe(true);
    expect(text(results[0])).toMatch(/^Tool "ls" did not run: its arguments are not valid JSON \(.+\): \{"path":"sr\./);
  });

  it("two calls glued into one: not executed; the error names the JSON failure", async () => {
    const { executed, results, text } = await run(chatFrames([start(0, "call_a", "ls", '{"path":"a"}{"path":"b"}'), finish]));
    expect(executed).toEqual([]);
    expect(text(results[0])).toMatch(/did not run: its arguments are not valid JSON .*\{"path":"a"\}\{"path":"b"\}/);
  });

  it("a required parameter: the error says JSON, not 'path: expected string, received undefined'", async () => {
    const { executed, results, text } = await run(chatFrames([start(0, "call_a", "read", "path=README.md"), finish]));
    expect(executed).toEqual([]);
    expect(text(results[0])).toMatch(/not valid JSON/);
    expect(text(results[0])).not.toMatch(/expected string/);
  });

  it("arguments that are JSON but not an object: not executed", async () => {
    const { executed, results, text } = await run(chatFrames([start(0, "call_a", "ls", '["a"]'), finish]));
    expect(executed).toEqual([]);
    expect(text(results[0])).toMatch(/its arguments are not a JSON object \(an array\)/);
  });
});

describe("Chat Completions tool calls that share an index", () => {
  it("two calls with different ids at index 0, arguments in pieces: both run with their own arguments", async () => {
    const { executed, results } = await run(
      chatFrames([start(0, "call_a", "ls"), piece(0, '{"path":'), piece(0, '"a"}'), start(0, "call_b", "ls"), piece(0, '{"path":'), piece(0, '"b"}'), finish]),
    );
    expect(executed).toEqual([{ path: "a" }, { path: "b" }]);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["call_a", false],
      ["call_b", false],
    ]);
  });

  it("interleaved pieces that name their call's id are routed by id", async () => {
    const byId = (id: string, args: string) => callDelta({ index: 0, id, function: { arguments: args } });
    const { executed } = await run(
      chatFrames([start(0, "call_a", "ls"), byId("call_a", '{"path":'), start(0, "call_b", "ls"), byId("call_a", '"a"}'), byId("call_b", '{"path":"b"}'), finish]),
    );
    expect(executed).toEqual([{ path: "a" }, { path: "b" }]);
  });

  it("recorded streams with awkward deltas still give one call each (qwen blank ids, an index starting at 1)", async () => {
    const qwen = await run(fixtureResponse(fixture("alibaba-tool-call.chunks.txt")));
    expect(qwen.results).toHaveLength(1);
    expect(qwen.text(qwen.results[0])).toMatch(/Tool weather not found/);
    await server?.close();
    const gateway = await run(fixtureResponse(fixture("anthropic-fallback-tool-call.sse")));
    expect(gateway.results).toHaveLength(1);
  });
});

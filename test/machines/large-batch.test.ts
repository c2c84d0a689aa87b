/**
 * Many tool calls in one response (issue 19 item 8): the calls over the per-response cap get an
 * error result and never run; a large batch completes with every result in call order; and the
 * event loop stays responsive during it, so an abort from a timer stops the batch.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import type { ModelClient } from "../../src/core/model-stream.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { fakeModel, memorySession } from "./helpers.ts";

function countingTool() {
  const executed: string[] = [];
  const tool = defineTool({
    name: "t",
    description: "counts",
    parameters: z.object({ n: z.number() }),
    async execute({ n }) {
      executed.push(String(n));
      return { content: [{ type: "text", text: `ran ${n}` }] };
    },
  });
  return { tool, executed };
}
const callsOf = (count: number) => Array.from({ length: count }, (_, n) => ({ id: `c${n}`, name: "t", arguments: { n } }));
/**
 * A model (the fake is of the model only) whose first reply is one message with these calls,
 * sent whole (`start`, `done`): per-call stream events would cost the test, not the loop.
 */
function bulkModel(calls: ReturnType<typeof callsOf>): ModelClient {
  let replies = 0;
  return {
    provider: "fake",
    modelId: "fake-model",
    api: "fake-api",
    async *stream() {
      const first = replies++ === 0;
      const message: AssistantMessage = {
        role: "assistant",
        content: first ? calls.map((call) => ({ type: "toolCall" as const, ...call })) : [{ type: "text", text: "ok" }],
        api: "fake-api",
        provider: "fake",
        model: "fake-model",
        usage: { input: 1, output: 1, cacheRead: null, cacheWrite: null, totalTokens: 2 },
        stopReason: first ? "toolUse" : "stop",
        timestamp: Date.now(),
      };
      yield { type: "start", partial: { ...message, content: [] } };
      yield { type: "done", message };
    },
  };
}
const resultsOf = (messages: readonly { role: string }[]) => messages.filter((m): m is ToolResultMessage => m.role === "toolResult");

describe("many tool calls in one response", () => {
  it("calls over maxToolCallsPerResponse get an error result and do not run; the run goes on", async () => {
    const { session } = await memorySession();
    const { tool, executed } = countingTool();
    const model = fakeModel([{ toolCalls: callsOf(5) }, { text: "ok" }]);
    const outcome = await createAgent({ session, model, tools: [tool], maxToolCallsPerResponse: 3 }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(executed).toEqual(["0", "1", "2"]);
    const context = session.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    const results = resultsOf(context.messages);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["c0", false],
      ["c1", false],
      ["c2", false],
      ["c3", true],
      ["c4", true],
    ]);
    expect((results[3].content[0] as { text: string }).text).toMatch(/did not run: this response made 5 tool calls and at most 3 run per response \(maxToolCallsPerResponse\)/);
    // The model saw all five results in call order.
    expect(model.requests[1].messages.filter((m) => m.role === "toolResult").map((m) => (m as ToolResultMessage).toolCallId)).toEqual(["c0", "c1", "c2", "c3", "c4"]);
  });

  it("the default cap is 128", async () => {
    const { session } = await memorySession();
    const { tool, executed } = countingTool();
    const outcome = await createAgent({ session, model: fakeModel([{ toolCalls: callsOf(130) }, { text: "ok" }]), tools: [tool] }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(executed).toHaveLength(128);
    expect(resultsOf(session.view.buildContext().messages).filter((m) => m.isError).map((m) => m.toolCallId)).toEqual(["c128", "c129"]);
  });

  it("10,000 calls in one response: the first 128 run, the rest get an error result at once", async () => {
    const { session } = await memorySession();
    const { tool, executed } = countingTool();
    const outcome = await createAgent({ session, model: bulkModel(callsOf(10_000)), tools: [tool] }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(executed).toHaveLength(128);
    const results = resultsOf(session.view.buildContext().messages);
    expect(results.map((m) => m.toolCallId)).toEqual(callsOf(10_000).map((call) => call.id));
    expect(results.filter((m) => m.isError)).toHaveLength(10_000 - 128);
  }, 120_000);

  it("a batch of 1,000 calls (cap raised) completes with every result, in call order", async () => {
    const { session } = await memorySession();
    const { tool, executed } = countingTool();
    const outcome = await createAgent({ session, model: bulkModel(callsOf(1000)), tools: [tool], maxToolCallsPerResponse: 1000 }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(executed).toHaveLength(1000);
    const results = resultsOf(session.view.buildContext().messages);
    expect(results.map((m) => m.toolCallId)).toEqual(callsOf(1000).map((call) => call.id));
    expect(results.every((m) => !m.isError)).toBe(true);
  }, 120_000);

  it("an abort from a timer fires during a large batch's preparation and stops it", async () => {
    const { session } = await memorySession();
    const { tool, executed } = countingTool();
    const agent = createAgent({ session, model: bulkModel(callsOf(3000)), tools: [tool], maxToolCallsPerResponse: 3000 });
    let armed = false;
    const subscription = agent.runEvents$.subscribe((event) => {
      if (event.type !== "tool.started" || armed) return;
      armed = true;
      setTimeout(() => agent.abort("timer"), 0);
    });
    const outcome = await agent.prompt("go");
    subscription.unsubscribe();
    expect(outcome.status).toBe("aborted");
    // The timer fired while calls were still being prepared: none executed, the rest were skipped.
    expect(executed).toEqual([]);
    const results = resultsOf(session.view.buildContext().messages);
    expect(results).toHaveLength(3000);
    expect(results.some((m) => /did not run: the run was aborted \(timer\)/.test((m.content[0] as { text: string }).text))).toBe(true);
  }, 120_000);
});

/**
 * Passive steering (pi #5895): a steering message sent just as the final assistant message
 * completes must not wake the finished agent for an extra turn. With `delivery: "passive"` it
 * is injected if the run goes on anyway, otherwise held for the next prompt. Active steering
 * keeps pi's behaviour (an extra turn), shown here for contrast.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentMessage, AssistantMessage } from "../../src/core/messages.ts";
import type { ModelClient, ModelRequest } from "../../src/core/model-stream.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import type { Agent } from "../../src/machines/agent-types.ts";
import { foldActivityAll } from "../../src/store/session/session-activity.ts";
import { memorySession, sessionEvents } from "./helpers.ts";

interface Reply {
  text?: string;
  toolCall?: string;
  /** Runs just before the reply's `done` is sent: the message is complete. */
  beforeDone?: () => void;
}

/** A scripted model (a fake of the model only) with a hook at the moment a reply completes. */
function model(replies: Reply[]): ModelClient & { requests: ModelRequest[] } {
  const queue = [...replies];
  const requests: ModelRequest[] = [];
  return {
    provider: "fake",
    modelId: "fake-model",
    api: "fake-api",
    requests,
    async *stream(request) {
      requests.push(request);
      const reply = queue.shift() ?? { text: "(unscripted)" };
      const message: AssistantMessage = {
        role: "assistant",
        content: reply.toolCall ? [{ type: "toolCall", id: reply.toolCall, name: "work", arguments: {} }] : [{ type: "text", text: reply.text ?? "" }],
        api: "fake-api",
        provider: "fake",
        model: "fake-model",
        usage: { input: 1, output: 1, cacheRead: null, cacheWrite: null, totalTokens: 2 },
        stopReason: reply.toolCall ? "toolUse" : "stop",
        timestamp: Date.now(),
      };
      yield { type: "start", partial: { ...message, content: [] } };
      reply.beforeDone?.();
      yield { type: "done", message };
    },
  };
}

const work = defineTool({
  name: "work",
  description: "works",
  parameters: z.object({}),
  async execute() {
    return { content: [{ type: "text", text: "worked" }] };
  },
});

const texts = (messages: readonly AgentMessage[]) =>
  messages.flatMap((m) => (m.role === "user" ? [typeof m.content === "string" ? m.content : m.content.map((part) => ("text" in part ? part.text : "")).join("")] : []));

describe("passive steering", () => {
  it("sent as the final assistant message completes: no extra turn; held and delivered with the next prompt", async () => {
    const { log, session } = await memorySession();
    const fake = model([{ text: "all done", beforeDone: () => agent.steer("also check the tests", { delivery: "passive" }) }, { text: "second prompt answered" }]);
    const agent: Agent = createAgent({ session, model: fake, tools: [work] });
    const first = await agent.prompt("do it");
    expect(first.status).toBe("done");
    expect(fake.requests).toHaveLength(1);
    expect(agent.hasQueuedMessages()).toBe(true);
    // Held durably: a restart would restore it.
    expect(foldActivityAll(await sessionEvents(log, session.id)).queues.passive).toHaveLength(1);
    const second = await agent.prompt("next");
    expect(second.status).toBe("done");
    expect(fake.requests).toHaveLength(2);
    expect(texts(fake.requests[1].messages)).toEqual(["do it", "next", "also check the tests"]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("active steering at the same moment wakes the agent for another turn (pi's behaviour)", async () => {
    const { session } = await memorySession();
    const fake = model([{ text: "all done", beforeDone: () => agent.steer("also check the tests") }, { text: "extra turn" }]);
    const agent: Agent = createAgent({ session, model: fake, tools: [work] });
    await agent.prompt("do it");
    expect(fake.requests).toHaveLength(2);
  });

  it("sent while tool calls are pending: injected into the next turn, which happens anyway", async () => {
    const { session } = await memorySession();
    const fake = model([{ toolCall: "c1", beforeDone: () => agent.steer("prefer small diffs", { delivery: "passive" }) }, { text: "done" }]);
    const agent: Agent = createAgent({ session, model: fake, tools: [work] });
    const outcome = await agent.prompt("do it");
    expect(outcome.status).toBe("done");
    expect(fake.requests).toHaveLength(2);
    expect(texts(fake.requests[1].messages)).toEqual(["do it", "prefer small diffs"]);
    expect(agent.hasQueuedMessages()).toBe(false);
  });

  it("a passive custom message while idle starts nothing and is held for the next prompt", async () => {
    const fake = model([{ text: "answered" }]);
    const harness = await createHarness({ eventLog: createMemoryEventLog(), cwd: "/w", models: { main: fake } });
    try {
      await harness.appendCustomMessage("app.note", "passive note", { deliverAs: "passive" });
      expect(fake.requests).toHaveLength(0);
      expect(harness.session.view.buildContext().messages).toEqual([]);
      expect(harness.hasQueuedMessages()).toBe(true);
      const outcome = await harness.prompt("hello");
      expect(outcome.messages.map((message) => message.role)).toEqual(["user", "custom", "assistant"]);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});

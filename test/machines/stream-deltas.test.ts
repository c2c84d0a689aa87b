/**
 * The model-call actor's direct delta path (run-logic.ts, issue 17 P4): a client that mutates one
 * live partial has its deltas recorded without run-machine transitions; a client that yields a
 * new partial per event goes through the machine for every event. Both must log the same events.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AssistantMessage } from "../../src/core/messages.ts";
import type { ModelClient, ModelStreamEvent } from "../../src/core/model-stream.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { memorySession, sessionEvents } from "./helpers.ts";

const echo = defineTool({
  name: "echo",
  description: "echo",
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ content: [{ type: "text", text }] }),
});

/** Two calls: text deltas, thinking, a tool call streamed in pieces; then a text answer. `copy` yields a fresh partial per event. */
function scripted(copy: boolean): ModelClient {
  let call = 0;
  return {
    provider: "fake",
    modelId: "fake-model",
    api: "fake-api",
    async *stream(): AsyncGenerator<ModelStreamEvent> {
      const turn = call++;
      const live: AssistantMessage = {
        role: "assistant",
        content: [],
        api: "fake-api",
        provider: "fake",
        model: "fake-model",
        usage: { input: 1, output: 1, cacheRead: null, cacheWrite: null, totalTokens: 2 },
        stopReason: "stop",
        timestamp: 1,
      };
      const partial = () => (copy ? { ...live, content: live.content.map((block) => ({ ...block })) } : live);
      yield { type: "start", partial: partial() };
      live.content.push({ type: "thinking", thinking: "" });
      yield { type: "thinking-start", contentIndex: 0, partial: partial() };
      for (const piece of ["let ", "me ", "think"]) {
        (live.content[0] as { thinking: string }).thinking += piece;
        yield { type: "thinking-delta", contentIndex: 0, delta: piece, partial: partial() };
      }
      yield { type: "thinking-end", contentIndex: 0, partial: partial() };
      live.content.push({ type: "text", text: "" });
      yield { type: "text-start", contentIndex: 1, partial: partial() };
      for (const piece of turn === 0 ? ["Calling ", "the ", "tool."] : ["All ", "done."]) {
        (live.content[1] as { text: string }).text += piece;
        yield { type: "text-delta", contentIndex: 1, delta: piece, partial: partial() };
      }
      yield { type: "text-end", contentIndex: 1, partial: partial() };
      if (turn === 0) {
        const toolCall = { type: "toolCall" as const, id: "c1", name: "echo", arguments: { text: "hi" } };
        yield { type: "toolcall-start", contentIndex: 2, id: "c1", name: "echo", partial: partial() };
        for (const piece of ['{"text"', ':"hi"}']) yield { type: "toolcall-delta", contentIndex: 2, id: "c1", delta: piece, partial: partial() };
        live.content.push(toolCall);
        yield { type: "toolcall-end", contentIndex: 2, toolCall, partial: partial() };
        live.stopReason = "toolUse";
      }
      yield { type: "done", message: { ...live, content: live.content.map((block) => ({ ...block })) } };
    },
  };
}

async function logged(copy: boolean) {
  const { log, session } = await memorySession();
  const agent = createAgent({ session, model: scripted(copy), tools: [echo] });
  const outcome = await agent.prompt("go");
  await agent.dispose();
  const events = await sessionEvents(log, session.id);
  const start = events.findIndex((event) => event.type === "run.started");
  return {
    outcome,
    types: events.slice(start).map((event) => event.type),
    // Delta texts joined per message, block and kind (the writer coalesces a tick's deltas).
    deltas: events
      .filter((event) => event.type === "message.delta")
      .map((event) => {
        const data = event.data as { contentIndex: number; kind: string; delta: string; toolName?: string };
        return `${data.contentIndex}/${data.kind}${data.toolName ? `/${data.toolName}` : ""}:${data.delta}`;
      })
      .join("|"),
    // Timestamps of the prompt and the tool result are wall-clock times.
    messages: session.view.buildContext().messages.map((message) => ({ ...message, timestamp: 0 })),
  };
}

describe("stream deltas", () => {
  it("a live-partial client and a copying client log the same events, deltas and messages", async () => {
    const live = await logged(false);
    const copied = await logged(true);
    expect(live.outcome.status).toBe("done");
    expect(copied.outcome.status).toBe("done");
    expect(live.types).toEqual(copied.types);
    expect(live.deltas).toEqual(copied.deltas);
    expect(live.deltas).toContain("0/thinking:let me think");
    expect(live.deltas).toContain('2/toolCall/echo:{"text":"hi"}');
    expect(live.messages).toEqual(copied.messages);
    expect(live.types.filter((type) => type === "message.started")).toHaveLength(4);
  });
});

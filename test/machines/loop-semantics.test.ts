/**
 * Loop semantics of createAgent over a real session (in-memory event log) and a
 * scripted model: tool batches, hooks, length stops, terminate, queues, busy.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SessionBusyError, InvalidStateError } from "../../src/core/errors.ts";
import type { ToolResultMessage, UserMessage } from "../../src/core/messages.ts";
import type { ModelRequest } from "../../src/core/model-stream.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { deferred, fakeModel, memorySession, sessionEvents, sleepTool } from "./helpers.ts";

const results = (messages: { role: string }[]) => messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
const textOf = (message: ToolResultMessage) => (message.content[0] as { text: string }).text;

describe("tool batches", () => {
  it("commits each result the moment its tool finishes, and the model sees call order", async () => {
    const { log, session } = await memorySession();
    const release = deferred();
    const gated = defineTool({
      name: "gated",
      description: "waits for the test",
      parameters: z.object({}),
      async execute() {
        await release.promise;
        return { content: [{ type: "text", text: "gated done" }] };
      },
    });
    const model = fakeModel([
      { toolCalls: [{ id: "A", name: "gated", arguments: {} }, { id: "B", name: "fast", arguments: { ms: 1 } }] },
      { text: "ok" },
    ]);
    const agent = createAgent({ session, model, tools: [gated, sleepTool("fast")] });
    const bFinished = deferred();
    agent.runEvents$.subscribe((event) => {
      if (event.type === "tool.ended" && event.data.toolCallId === "B") bFinished.resolve();
    });
    const outcome = agent.prompt("go");
    await bFinished.promise;
    // B is durable in the log while A still runs.
    const stored = await sessionEvents(log, session.id);
    const storedResults = stored.flatMap((event) => {
      const entry = (event.data as { entry?: { type: string; message?: ToolResultMessage } }).entry;
      return event.type === "entry.appended" && entry?.message?.role === "toolResult" ? [entry.message.toolCallId] : [];
    });
    expect(storedResults).toEqual(["B"]);
    expect(agent.getState().pendingToolCalls).toEqual(["A"]);
    release.resolve();
    expect((await outcome).status).toBe("done");
    const second = model.requests[1].messages;
    expect(results(second).map((m) => m.toolCallId)).toEqual(["A", "B"]);
    expect(results(session.view.buildContext().messages).map((m) => m.toolCallId)).toEqual(["A", "B"]);
  });

  it("turns a throwing tool and invalid arguments into error results and goes on", async () => {
    const { session } = await memorySession();
    const boom = defineTool({
      name: "boom",
      description: "throws",
      parameters: z.object({ n: z.number() }),
      async execute() {
        throw new Error("kaboom");
      },
    });
    const model = fakeModel([
      { toolCalls: [{ id: "A", name: "boom", arguments: { n: 1 } }, { id: "B", name: "boom", arguments: { n: "x" } }] },
      { text: "recovered" },
    ]);
    const agent = createAgent({ session, model, tools: [boom] });
    const outcome = await agent.prompt("go");
    expect(outcome.status).toBe("done");
    const [a, b] = results(outcome.messages);
    expect(a.isError).toBe(true);
    expect(textOf(a)).toBe("kaboom");
    expect(b.isError).toBe(true);
    expect(textOf(b)).toMatch(/n:/);
    expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "recovered" }]);
  });

  it("ends the loop when every result says terminate", async () => {
    const { session } = await memorySession();
    const stop = defineTool({
      name: "stop",
      description: "terminates",
      parameters: z.object({}),
      async execute() {
        return { content: [{ type: "text", text: "bye" }], terminate: true };
      },
    });
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "stop", arguments: {} }, { id: "B", name: "stop", arguments: {} }] }, { text: "never" }]);
    const outcome = await createAgent({ session, model, tools: [stop] }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(model.calls).toBe(1);
  });

  it("goes on when only some results say terminate", async () => {
    const { session } = await memorySession();
    const stop = defineTool({
      name: "stop",
      description: "terminates",
      parameters: z.object({}),
      async execute() {
        return { content: [{ type: "text", text: "bye" }], terminate: true };
      },
    });
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "stop", arguments: {} }, { id: "B", name: "fast", arguments: { ms: 1 } }] }, { text: "next" }]);
    await createAgent({ session, model, tools: [stop, sleepTool("fast")] }).prompt("go");
    expect(model.calls).toBe(2);
  });

  it("does not execute tool calls of a message that stopped for length", async () => {
    const { session } = await memorySession();
    let executed = 0;
    const tool = defineTool({
      name: "write",
      description: "writes",
      parameters: z.object({ text: z.string() }),
      async execute() {
        executed += 1;
        return { content: [{ type: "text", text: "written" }] };
      },
    });
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "write", arguments: { text: "abc" } }], stopReason: "length" }, { text: "retrying shorter" }]);
    const outcome = await createAgent({ session, model, tools: [tool] }).prompt("go");
    expect(executed).toBe(0);
    const [result] = results(outcome.messages);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not executed.*output token limit.*truncated/);
    expect(model.calls).toBe(2);
  });

  it("ends the run after a text-only message that stopped for length (no second model call)", async () => {
    const { session } = await memorySession();
    const model = fakeModel([{ text: "a truncated answ", stopReason: "length" }, { text: "never asked for" }]);
    const outcome = await createAgent({ session, model, tools: [] }).prompt("go");
    expect(model.calls).toBe(1);
    expect(outcome.status).toBe("done");
    const last = session.view.buildContext().messages.at(-1);
    expect(last?.role).toBe("assistant");
    expect(last?.role === "assistant" && last.stopReason).toBe("length");
  });

  it("runs sequentially when a called tool declares executionMode sequential", async () => {
    const { log, session } = await memorySession();
    const model = fakeModel([
      { toolCalls: [{ id: "A", name: "slow", arguments: { ms: 20 } }, { id: "B", name: "seq", arguments: { ms: 1 } }] },
      { text: "ok" },
    ]);
    await createAgent({ session, model, tools: [sleepTool("slow"), sleepTool("seq", "sequential")] }).prompt("go");
    const tools = (await sessionEvents(log, session.id))
      .filter((event) => event.type.startsWith("tool."))
      .map((event) => `${event.type}:${(event.data as { toolCallId: string }).toolCallId}`);
    expect(tools).toEqual(["tool.started:A", "tool.updated:A", "tool.ended:A", "tool.started:B", "tool.updated:B", "tool.ended:B"]);
  });

  it("times a tool out and says so", async () => {
    const { session } = await memorySession();
    const slow = { ...sleepTool("slow"), timeoutMs: 20 };
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "slow", arguments: { ms: 5000 } }] }, { text: "ok" }]);
    const outcome = await createAgent({ session, model, tools: [slow] }).prompt("go");
    const [result] = results(outcome.messages);
    expect(textOf(result)).toMatch(/^Tool "slow" timed out after 20 ms and was stopped, so it may not have finished.*may need to be run again\.$/);
    expect(outcome.status).toBe("done");
  });
});

describe("hooks", () => {
  it("beforeToolCall may replace the arguments (not re-validated) and a throw blocks", async () => {
    const { session } = await memorySession();
    const seen: unknown[] = [];
    const echo = defineTool({
      name: "echo",
      description: "echo",
      parameters: z.object({ text: z.string() }),
      async execute(args) {
        seen.push(args);
        return { content: [{ type: "text", text: String(args.text) }] };
      },
    });
    const model = fakeModel([
      { toolCalls: [{ id: "A", name: "echo", arguments: { text: "a" } }, { id: "B", name: "echo", arguments: { text: "b" } }] },
      { text: "ok" },
    ]);
    const agent = createAgent({
      session,
      model,
      tools: [echo],
      hooks: {
        beforeToolCall: ({ toolCallId }) => {
          if (toolCallId === "B") throw new Error("policy says no");
          return { args: { text: 42 } };
        },
      },
    });
    const outcome = await agent.prompt("go");
    expect(seen).toEqual([{ text: 42 }]);
    const [, b] = results(outcome.messages);
    expect(b.isError).toBe(true);
    expect(textOf(b)).toBe("policy says no");
  });

  it("afterToolCall replaces fields one by one and a throw makes an error result", async () => {
    const { session } = await memorySession();
    const model = fakeModel([
      { toolCalls: [{ id: "A", name: "fast", arguments: { ms: 1 } }, { id: "B", name: "fast", arguments: { ms: 1 } }] },
      { text: "ok" },
    ]);
    const agent = createAgent({
      session,
      model,
      tools: [sleepTool("fast")],
      hooks: {
        afterToolCall: ({ toolCallId }) => {
          if (toolCallId === "B") throw new Error("after failed");
          return { details: { patched: true } };
        },
      },
    });
    const outcome = await agent.prompt("go");
    const [a, b] = results(outcome.messages);
    expect(a).toMatchObject({ isError: false, details: { patched: true }, content: [{ type: "text", text: "fast slept 1" }] });
    expect(b).toMatchObject({ isError: true, content: [{ type: "text", text: "after failed" }] });
  });

  it("runs transformContext then convertToLlm before every model call", async () => {
    const { session } = await memorySession();
    const calls: string[] = [];
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "fast", arguments: { ms: 1 } }] }, { text: "ok" }]);
    await createAgent({
      session,
      model,
      tools: [sleepTool("fast")],
      hooks: {
        transformContext: (messages) => {
          calls.push(`transform:${messages.length}`);
          return [...messages, { role: "user", content: "extra", timestamp: 1 } satisfies UserMessage];
        },
        convertToLlm: (messages) => {
          calls.push(`convert:${messages.length}`);
          return messages;
        },
      },
    }).prompt("go");
    expect(calls).toEqual(["transform:1", "convert:2", "transform:3", "convert:4"]);
    expect(model.requests[1].messages.at(-1)).toMatchObject({ content: "extra" });
  });
});

describe("queues and busy", () => {
  it("prompt while running throws SessionBusyError synchronously", async () => {
    const { session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([{ text: "a" }]) });
    const first = agent.prompt("one");
    expect(() => agent.prompt("two")).toThrow(SessionBusyError);
    await first;
    expect(agent.getState().status).toBe("idle");
  });

  it("steering one-at-a-time injects one message per turn; all injects both at once", async () => {
    for (const mode of ["one-at-a-time", "all"] as const) {
      const { session } = await memorySession();
      const model = fakeModel([{ text: "a" }, { text: "b" }, { text: "c" }]);
      const agent = createAgent({ session, model, steeringMode: mode });
      agent.steer("S1");
      agent.steer("S2");
      await agent.prompt("go");
      const userTexts = (request: ModelRequest) =>
        request.messages.filter((m) => m.role === "user").map((m) => JSON.stringify((m as UserMessage).content));
      if (mode === "all") {
        expect(model.calls).toBe(1);
        expect(userTexts(model.requests[0])).toHaveLength(3);
      } else {
        expect(model.calls).toBe(2);
        expect(userTexts(model.requests[0])).toHaveLength(2);
        expect(userTexts(model.requests[1])).toHaveLength(3);
      }
      expect(agent.hasQueuedMessages()).toBe(false);
    }
  });

  it("continue refuses an empty session and a finished reply without queued messages", async () => {
    const { session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([{ text: "a" }, { text: "b" }]) });
    await expect(agent.continue()).rejects.toThrow(InvalidStateError);
    await agent.prompt("go");
    await expect(agent.continue()).rejects.toThrow(/Cannot continue from message role: assistant/);
    agent.followUp("more");
    const outcome = await agent.continue();
    expect(outcome.status).toBe("done");
    expect(outcome.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("clears queues and records queue changes", async () => {
    const { log, session } = await memorySession();
    const agent = createAgent({ session, model: fakeModel([]) });
    agent.steer("x");
    agent.followUp("y");
    expect(agent.hasQueuedMessages()).toBe(true);
    agent.clearAllQueues();
    expect(agent.hasQueuedMessages()).toBe(false);
    await agent.waitForIdle();
    const changes = (await sessionEvents(log, session.id)).filter((e) => e.type === "queue.changed").map((e) => (e.data as { action: string }).action);
    expect(changes).toEqual(["enqueued", "enqueued", "cleared", "cleared"]);
  });
});

describe("compaction hook points", () => {
  it("betweenTurns runs before every further model call, after the turn is committed, and may replace the messages", async () => {
    const { session } = await memorySession();
    const model = fakeModel([{ toolCalls: [{ id: "A", name: "fast", arguments: { ms: 1 } }] }, { text: "ok" }]);
    const seen: number[] = [];
    const outcome = await createAgent({
      session,
      model,
      tools: [sleepTool("fast")],
      hooks: {
        betweenTurns: async ({ messages, lastAssistant }) => {
          seen.push(session.view.buildContext().messages.length, messages.length);
          expect(lastAssistant.stopReason).toBe("toolUse");
          return [{ role: "user", content: "summary of everything", timestamp: 1 }];
        },
      },
    }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(seen).toEqual([3, 3]);
    expect(model.requests[1].messages).toEqual([{ role: "user", content: "summary of everything", timestamp: 1 }]);
  });

  it("onContextOverflow gets one retry with compacted messages; the overflowing attempt is not appended", async () => {
    const { session } = await memorySession();
    const model = fakeModel([{ error: "context too long", info: { retryable: false, contextOverflow: true } }, { text: "fits now" }]);
    const outcome = await createAgent({
      session,
      model,
      hooks: { onContextOverflow: async () => [{ role: "user", content: "compacted", timestamp: 1 }] },
    }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(model.requests[1].messages).toEqual([{ role: "user", content: "compacted", timestamp: 1 }]);
    expect(session.view.buildContext().messages.filter((m) => m.role === "assistant")).toHaveLength(1);
  });

  it("without an overflow recovery the overflow error is persisted and the run fails", async () => {
    const { session } = await memorySession();
    const model = fakeModel([{ error: "context too long", info: { retryable: false, contextOverflow: true } }]);
    const outcome = await createAgent({ session, model, hooks: { onContextOverflow: async () => undefined } }).prompt("go");
    expect(outcome.status).toBe("failed");
    expect(session.view.buildContext().messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error", errorMessage: "context too long" });
  });
});

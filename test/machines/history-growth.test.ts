/**
 * Per-prompt work must not grow with the session's history: counted, never timed. A long session of prompts
 * (one tool turn and a final text each) over the AI SDK adapter and a real SQLite log; the model is the SDK's
 * `MockLanguageModelV4`, which keeps every call's options, as any client may keep the signal it was given.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAiSdkModelClient } from "../../src/adapters/model/index.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { streamPartsOf } from "../../src/testing/scripted-model.ts";
import { tempDbPath } from "./helpers.ts";

const echo = defineTool({
  name: "echo",
  description: "Echo the text back",
  parameters: z.object({ text: z.string() }),
  async execute(args) {
    return { content: [{ type: "text", text: args.text }] };
  },
});

/** Even calls ask for the tool, odd calls answer: one prompt is two model calls. */
function toolThenTextModel(): MockLanguageModelV4 {
  let call = 0;
  return new MockLanguageModelV4({
    doStream: async () => {
      const turn = call++;
      const parts =
        turn % 2 === 0
          ? streamPartsOf({ text: `Turn ${turn}.`, toolCalls: [{ id: `call_${turn}`, name: "echo", arguments: { text: `value ${turn}` } }] })
          : streamPartsOf({ text: `Done ${turn}.` });
      return { stream: new ReadableStream<LanguageModelV4StreamPart>({ start: (controller) => (parts.forEach((part) => controller.enqueue(part)), controller.close()) }) };
    },
  });
}

/** Counts the events each log read hands back (the reads that would scan the history). */
function countingLog(log: EventLog): { log: EventLog; eventsRead: () => number } {
  let read = 0;
  const counted: EventLog = Object.create(log) as EventLog;
  counted.readStream = async (...args) => {
    const events = await log.readStream(...args);
    read += events.length;
    return events;
  };
  counted.readAll = async (...args) => {
    const events = await log.readAll(...args);
    read += events.length;
    return events;
  };
  return { log: counted, eventsRead: () => read };
}

describe("per-prompt work in a long session", () => {
  it("a model call that streamed to its end never has its signal aborted (the aborted signal's Error would keep the finished run's actors, and their copies of the history, alive in the client)", async () => {
    const log = createSqliteEventLog({ path: tempDbPath() });
    try {
      const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
      const model = toolThenTextModel();
      const agent = createAgent({ session, model: createAiSdkModelClient(model), tools: [echo] });
      for (let index = 0; index < 5; index++) expect((await agent.prompt(`Prompt ${index}`)).status).toBe("done");
      await agent.dispose();
      expect(model.doStreamCalls).toHaveLength(10);
      expect(model.doStreamCalls.map((call) => call.abortSignal?.aborted)).toEqual(Array(10).fill(false));
    } finally {
      await log.close();
    }
  });

  it("reads back no more events for prompt 60 than for prompt 10", async () => {
    const sqlite = createSqliteEventLog({ path: tempDbPath() });
    try {
      const { log, eventsRead } = countingLog(sqlite);
      const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
      const agent = createAgent({ session, model: createAiSdkModelClient(toolThenTextModel()), tools: [echo] });
      const readPerPrompt: number[] = [];
      for (let index = 0; index < 60; index++) {
        const before = eventsRead();
        expect((await agent.prompt(`Prompt ${index}`)).status).toBe("done");
        readPerPrompt.push(eventsRead() - before);
      }
      await agent.dispose();
      expect(readPerPrompt[59]).toBeLessThanOrEqual(readPerPrompt[9]);
    } finally {
      await sqlite.close();
    }
  });
});

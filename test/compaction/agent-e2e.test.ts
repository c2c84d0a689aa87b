/**
 * Compaction inside real agent runs: createAgent over a SQLite session, the real
 * @ai-sdk/openai client talking to loopback OpenAI-wire servers (one for the
 * session's model, one for the summarization model).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { compactionView } from "../../src/compaction/compaction-view.ts";
import { createCompactionHooks, type CompactionHookEvent } from "../../src/compaction/hooks.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import type { CompactionEntry, SessionEntry } from "../../src/core/entries.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { appendTurns, pairingProblems } from "./fixtures.ts";

const WINDOW = 6000;
const compactionSettings = (summarizer: OpenAIServer) => ({
  reserveTokens: 1500,
  keepRecentTokens: 2000,
  contextWindow: { "openai/gpt-test": WINDOW },
  summarizationModel: createOpenAIModel({ modelId: "gpt-summary", baseURL: summarizer.url, apiKey: "test", api: "chat" }),
});

/** Tokens of a received request, counted like Arbor's estimate: every string in the body's messages and tools, chars / 4. */
function requestTokens(body: { messages?: unknown; tools?: unknown }): number {
  let chars = 0;
  const walk = (value: unknown) => {
    if (typeof value === "string") chars += value.length;
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(body.messages);
  walk(body.tools);
  return Math.ceil(chars / 4);
}

const read = defineTool({
  name: "read",
  description: "Read a file",
  parameters: z.object({ path: z.string() }),
  async execute(args) {
    return { content: [{ type: "text", text: `${args.path}: ` + "x".repeat(2400) }] };
  },
});

/** No compaction entry is appended between a tool call and its results (never during a tool batch). */
function compactionsOutsideBatches(path: SessionEntry[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  for (const entry of path) {
    const message = (entry as { message?: AgentMessage }).message;
    if (message?.role === "assistant") for (const block of message.content) if (block.type === "toolCall") open.add(block.id);
    if (message?.role === "toolResult") open.delete(message.toolCallId);
    if (entry.type === "compaction" && open.size > 0) problems.push(`compaction ${entry.id} appended with calls in flight: ${[...open].join(", ")}`);
  }
  return problems;
}

describe("compaction in agent runs", { timeout: 60_000 }, () => {
  let server: OpenAIServer;
  let summarizer: OpenAIServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-compaction-e2e-"));
    [server, summarizer] = await Promise.all([startOpenAIServer(), startOpenAIServer()]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), summarizer?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(name: string) {
    const log = createSqliteEventLog({ path: join(dir, `${name}.db`) });
    const session = await createSessionRepository({ log }).create({ cwd: dir });
    return { log, session };
  }

  it("compacts between turns of a long tool loop, so no request exceeds the window, and the run goes on", async () => {
    const { log, session } = await open("loop");
    try {
      const turns = 16;
      const startRequests = server.requests.length;
      const startSummaries = summarizer.requests.length;
      for (let turn = 0; turn < turns; turn++) {
        server.script(toolCallResponse([{ id: `call_${turn}`, name: "read", arguments: { path: `src/f${turn}.ts` } }], { text: `Reading file ${turn}.`, usage: null }));
      }
      server.script(textResponse("All files read.", { usage: null }));
      summarizer.script(...Array.from({ length: 30 }, (_, index) => textResponse(`## Goal\nRead all files (summary ${index}).`)));

      const events: CompactionHookEvent[] = [];
      const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
      const agent = createAgent({
        session,
        model,
        tools: [read],
        hooks: createCompactionHooks({ session, model, settings: compactionSettings(summarizer), onEvent: (event) => events.push(event) }),
      });
      const outcome = await agent.prompt("Read src/f0.ts through src/f15.ts, one per turn.");
      await agent.dispose();

      expect(outcome.status).toBe("done");
      expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "All files read." }]);
      const requests = server.requests.slice(startRequests);
      expect(requests).toHaveLength(turns + 1);
      const sizes = requests.map((request) => requestTokens(request.body));
      expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
      // Without compaction the last request would hold every result (16 × 600+ tokens).
      expect(turns * 600).toBeGreaterThan(WINDOW);

      const appended = events.filter((event) => event.type === "compactionAppended");
      expect(appended.length).toBeGreaterThanOrEqual(2);
      expect(events.filter((event) => event.type === "compactionSkipped")).toEqual([]);
      const view = compactionView(session);
      expect(view.map((item) => item.entryId)).toEqual(appended.map((event) => (event as { entryId: string }).entryId));
      for (const item of view) {
        expect(item.estimatedTokensAfter).toBeLessThan(item.tokensBefore);
        expect(item.covers.messageCount).toBeGreaterThan(0);
        expect(item.readFiles.length).toBeGreaterThan(0);
      }
      // Summaries went to the summarization model, without tools, with maxTokens 0.8 × reserve.
      const summaryRequests = summarizer.requests.slice(startSummaries);
      expect(summaryRequests.length).toBeGreaterThanOrEqual(appended.length);
      for (const request of summaryRequests) {
        expect(request.body.tools).toBeUndefined();
        expect([Math.floor(0.8 * 1500), Math.floor(0.5 * 1500)]).toContain(request.body.max_tokens ?? request.body.max_completion_tokens);
      }

      const path = session.view.getBranch();
      expect(compactionsOutsideBatches(path)).toEqual([]);
      const context = session.view.buildContext();
      expect(pairingProblems(context.messages)).toEqual([]);
      expect(context.diagnostics).toEqual([]);
      const last = path.filter((entry) => entry.type === "compaction").at(-1) as CompactionEntry;
      expect(last.summary).toMatch(/<read-files>\n(src\/f\d+\.ts\n)+<\/read-files>/);
    } finally {
      await log.close();
    }
  });

  const overflowBody = {
    error: {
      message: "This model's maximum context length is 6000 tokens. However, your messages resulted in 9024 tokens. Please reduce the length of the messages.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  };

  it("recovers from a provider context-overflow error: compacts, then retries once and succeeds", async () => {
    const { log, session } = await open("overflow");
    try {
      await appendTurns(session, 6);
      const startRequests = server.requests.length;
      server.script(errorResponse(400, overflowBody), textResponse("Recovered.", { usage: null }));
      summarizer.script(textResponse("## Goal\nEarlier work."), textResponse("## Original Request\nprefix"));
      const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
      const events: CompactionHookEvent[] = [];
      const agent = createAgent({ session, model, hooks: createCompactionHooks({ session, model, settings: compactionSettings(summarizer), onEvent: (event) => events.push(event) }) });
      const outcome = await agent.prompt("And now?");
      await agent.dispose();

      expect(outcome.status).toBe("done");
      expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "Recovered." }]);
      const [first, second] = server.requests.slice(startRequests).map((request) => requestTokens(request.body));
      expect(server.requests.length - startRequests).toBe(2);
      expect(second).toBeLessThan(first / 2);
      expect(events.map((event) => `${event.type}:${event.reason}`)).toEqual(["compactionAppended:overflow"]);
      expect(compactionView(session)).toHaveLength(1);
      expect(pairingProblems(session.view.buildContext().messages)).toEqual([]);
    } finally {
      await log.close();
    }
  });

  it("a second overflow after the compact-and-retry fails the run with the provider's message", async () => {
    const { log, session } = await open("overflow-twice");
    try {
      await appendTurns(session, 6);
      const startRequests = server.requests.length;
      server.script(errorResponse(400, overflowBody), errorResponse(400, overflowBody));
      summarizer.script(textResponse("## Goal\nEarlier work."), textResponse("## Original Request\nprefix"));
      const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
      const agent = createAgent({ session, model, hooks: createCompactionHooks({ session, model, settings: compactionSettings(summarizer) }) });
      const outcome = await agent.prompt("And now?");
      await agent.dispose();

      expect(outcome.status).toBe("failed");
      expect(outcome.error ?? outcome.lastAssistant?.errorMessage).toMatch(/maximum context length/);
      expect(server.requests.length - startRequests).toBe(2);
      expect(compactionView(session)).toHaveLength(1);
    } finally {
      await log.close();
    }
  });
});

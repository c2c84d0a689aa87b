/** Test helpers: real sessions (memory or SQLite log) filled with conversations, and scripted summary models. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAiSdkModelClient } from "../../src/adapters/model/ai-sdk-client.ts";
import type { SessionEntry } from "../../src/core/entries.ts";
import type { AgentMessage, AssistantMessage } from "../../src/core/messages.ts";
import type { ModelClient } from "../../src/core/model-stream.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { SessionHandle } from "../../src/store/session-types.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel, type ScriptedStep } from "../../src/testing/scripted-model.ts";

export async function newSession(kind: "memory" | "sqlite" = "memory") {
  const log = kind === "memory" ? createMemoryEventLog() : createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-compaction-")), "arbor.db") });
  const repo = createSessionRepository({ log });
  const session = await repo.create({ cwd: "/work" });
  return { log, repo, session };
}

let clock = Date.UTC(2026, 10, 30, 10, 0, 0);
const now = () => (clock += 1000);

export const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: now() });
export const assistant = (text: string, calls: { id: string; name: string; arguments: Record<string, unknown> }[] = [], total = 0): AssistantMessage => ({
  role: "assistant",
  content: [...(text ? [{ type: "text" as const, text }] : []), ...calls.map((call) => ({ type: "toolCall" as const, ...call }))],
  api: "openai-chat",
  provider: "openai",
  model: "gpt-test",
  usage: total ? { input: total - 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: total } : { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null },
  stopReason: calls.length ? "toolUse" : "stop",
  timestamp: now(),
});
export const toolResult = (id: string, name: string, text: string): AgentMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: now(),
});

let callCounter = 0;
/** Appends `turns` turns: user, assistant calling read+edit, two results, final assistant text. Each turn ≈ 4 × size chars. */
export async function appendTurns(session: SessionHandle, turns: number, size = 2000): Promise<SessionEntry[]> {
  const messages: AgentMessage[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const a = `c${++callCounter}`;
    const b = `c${++callCounter}`;
    messages.push(user(`Turn ${turn}: please look at src/file${turn}.ts ` + "u".repeat(size)));
    messages.push(assistant("Reading and fixing.", [
      { id: a, name: "read", arguments: { path: `src/file${turn}.ts` } },
      { id: b, name: "edit", arguments: { path: `src/file${turn}.ts`, oldText: "x", newText: "y" } },
    ]));
    messages.push(toolResult(a, "read", "r".repeat(size)));
    messages.push(toolResult(b, "edit", "ok"));
    messages.push(assistant("Done with turn " + turn + " " + "a".repeat(size)));
  }
  return session.appendEntries(messages.map((message) => ({ type: "message", message })));
}

/** A ModelClient over the real AI SDK adapter, answering each call with the next step. */
export function summaryModel(steps: ScriptedStep[], info: { contextWindow?: number; maxTokens?: number } = {}) {
  const mock = scriptedModel(steps);
  const client: ModelClient = createAiSdkModelClient(mock, { provider: "openai", modelId: "gpt-test", ...info });
  return { client, mock };
}

/** Every tool result is preceded by its call and every call followed by its result (in order). */
export function pairingProblems(messages: readonly AgentMessage[]): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  const seen = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const id of open) problems.push(`call ${id} has no result before the next assistant`);
      open.clear();
      for (const block of message.content) {
        if (block.type !== "toolCall") continue;
        open.add(block.id);
        seen.add(block.id);
      }
    } else if (message.role === "toolResult") {
      if (!open.has(message.toolCallId)) problems.push(`result ${message.toolCallId} has no preceding call${seen.has(message.toolCallId) ? " (duplicate)" : ""}`);
      open.delete(message.toolCallId);
    }
  }
  return problems;
}

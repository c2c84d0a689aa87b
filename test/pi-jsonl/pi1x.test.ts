/**
 * pi 1.x session files (header still version 3; pi 1.6's `docs/session-format.md`): system
 * messages, `usage` and `context_edit` entries, compaction `systemMessage` and a retain-none
 * compaction, `stopReason: "deferred"`, new assistant, usage and tool-result fields. Import keeps
 * every line (export gives them back byte for byte), the context is pi 1.6's (`context_edit`
 * applied branch-relatively), stats count the spend outside the context, and what Arbor does not
 * apply is reported, not refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSessionContext, convertToLlm as piConvertToLlm, migrateSessionEntries, parseSessionEntries } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { exportPiSession, importPiSession } from "../../src/adapters/pi-jsonl/index.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { runArbor } from "../cli/cli-helpers.ts";
import { piOracle } from "./pi-oracle.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-pi1x-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const at = (n: number) => `2026-11-20T10:00:${String(n).padStart(2, "0")}.000Z`;
const ms = (n: number) => Date.parse(at(n));
const usage = (input: number, output: number, cacheRead: number, cacheWrite: number, total: number) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  totalTokens: input + output + cacheRead + cacheWrite,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total },
});
const assistant = (text: string, n: number, extra: Record<string, unknown> = {}) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage: usage(10, 5, 0, 0, 0.0001),
  stopReason: "stop",
  timestamp: ms(n),
  ...extra,
});

const HEADER = { type: "session", version: 3, id: "pi1x-0001", timestamp: at(0), cwd: "/work/demo", parentSession: "/home/u/.pi/agent/sessions/--work-demo--/original.jsonl", fromPi2: { x: 1 } };
/** The active path runs s1 → … → u4 (the last line); e3 is a context_edit on a side branch. */
const ENTRIES: Record<string, unknown>[] = [
  { type: "message", id: "s1", parentId: null, timestamp: at(1), message: { role: "system", content: "You are pi.", sections: { style: "Be brief." }, toolsAdded: [{ name: "read" }], toolsRemoved: [], timestamp: ms(1) } },
  { type: "message", id: "u1", parentId: "s1", timestamp: at(2), message: { role: "user", content: "read a.txt", timestamp: ms(2) } },
  {
    type: "message",
    id: "a1",
    parentId: "u1",
    timestamp: at(3),
    message: {
      ...assistant("", 3),
      content: [{ type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.txt" } }],
      stopReason: "toolUse",
      // New in pi 1.x: reasoning is already inside output, cacheWrite1h inside cacheWrite.
      usage: { ...usage(20, 30, 1_000, 400, 0.002), reasoning: 12, cacheWrite1h: 100 },
      responseModel: "claude-sonnet-4-5-20250929",
      responseId: "msg_01",
      thinkingLevel: "low",
      diagnostics: [{ kind: "retry", attempt: 1 }],
      rawStopReason: "tool_use",
      endTurn: false,
    },
  },
  {
    type: "message",
    id: "r1",
    parentId: "a1",
    timestamp: at(4),
    message: {
      role: "toolResult",
      toolCallId: "toolu_1",
      toolName: "read",
      content: [{ type: "text", text: "hello" }],
      isError: false,
      timestamp: ms(4),
      usage: usage(7, 3, 0, 0, 0.00005),
      nestedCalls: { calls: [{ id: "n1", name: "grep", status: "ok", durationMs: 3 }], complete: true },
    },
  },
  {
    type: "message",
    id: "a2",
    parentId: "r1",
    timestamp: at(5),
    message: assistant("It says hello.", 5, { stopReason: "deferred", deferred: { provider: "anthropic", modelId: "claude-sonnet-4-5", api: "anthropic-messages", id: "msgbatch_1" } }),
  },
  { type: "usage", id: "w1", parentId: "a2", timestamp: at(6), kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(0, 0, 0, 5_000, 0.01875) },
  { type: "usage", id: "w2", parentId: "w1", timestamp: at(7), kind: "kind_from_pi_2", provider: "openai", model: "gpt-5", usage: usage(100, 0, 0, 0, 0.0002) },
  { type: "message", id: "u2", parentId: "w2", timestamp: at(8), message: { role: "user", content: "my password is hunter2, remember it", timestamp: ms(8) } },
  { type: "message", id: "a3", parentId: "u2", timestamp: at(9), message: assistant("Noted: hunter2.", 9) },
  { type: "context_edit", id: "e1", parentId: "a3", timestamp: at(10), targetId: "a3", replacement: null },
  { type: "context_edit", id: "e2", parentId: "e1", timestamp: at(11), targetId: "u2", replacement: { content: "my password is [removed]" } },
  { type: "context_edit", id: "e3", parentId: "a2", timestamp: at(12), targetId: "u1", replacement: null },
  // A string replacing a tool result's content becomes one text block (pi 1.6).
  { type: "context_edit", id: "e4", parentId: "e2", timestamp: at(12), targetId: "r1", replacement: { content: "[file contents elided]" } },
  { type: "message", id: "u3", parentId: "e4", timestamp: at(13), message: { role: "user", content: "thanks", timestamp: ms(13) } },
  // A "retain-none" compaction stores its own id as firstKeptEntryId; pi 1.x adds systemMessage and usage.
  {
    type: "compaction",
    id: "c1",
    parentId: "u3",
    timestamp: at(14),
    summary: "Read a.txt; it says hello.",
    firstKeptEntryId: "c1",
    tokensBefore: 1_500,
    systemMessage: { role: "system", content: "You are pi (compacted).", toolsAdded: [], timestamp: ms(14) },
    usage: usage(1_500, 80, 0, 0, 0.0005),
  },
  { type: "message", id: "u4", parentId: "c1", timestamp: at(15), message: { role: "user", content: "and now?", timestamp: ms(15) } },
];
const TEXT = [HEADER, ...ENTRIES].map((line) => JSON.stringify(line)).join("\n") + "\n";

async function imported() {
  const path = join(dir, `pi1x-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(path, TEXT);
  const repo = createSessionRepository({ log: createMemoryEventLog() });
  return { path, ...(await importPiSession(repo, path)) };
}

function piEntries(text: string) {
  const entries = parseSessionEntries(text) as unknown as { type: string; id: string; parentId: string | null }[];
  migrateSessionEntries(entries as never);
  return entries.filter((entry) => entry.type !== "session");
}
const json = (value: unknown) => JSON.parse(JSON.stringify(value));
const oracle = piOracle({ parseSessionEntries, migrateSessionEntries, buildSessionContext, convertToLlm: piConvertToLlm } as never);

describe("pi 1.x session files", () => {
  it("import keeps every entry: export gives back every line as it was, and warns (not fails) on what Arbor does not apply", async () => {
    const { session, diagnostics, fromVersion } = await imported();
    expect(fromVersion).toBe(3);
    expect(session.view.getEntries()).toHaveLength(ENTRIES.length);
    expect(session.view.leafId).toBe("u4");
    const unmodeled = diagnostics.filter((diagnostic) => diagnostic.kind === "unmodeled");
    expect(diagnostics.filter((diagnostic) => diagnostic.kind !== "unmodeled")).toEqual([]);
    expect(unmodeled.map((diagnostic) => diagnostic.message)).toEqual([
      expect.stringMatching(/^1 pi 1\.x system message.*line 2\)\.$/),
      expect.stringMatching(/^1 compaction systemMessage.*line 16\)\.$/),
      expect.stringMatching(/^1 assistant message.*"deferred".*line 6\)\.$/),
    ]);
    const lines = exportPiSession(session.view).trim().split("\n");
    expect(lines.slice(1)).toEqual(TEXT.trim().split("\n").slice(1));
    // The header too, with the Arbor session's id: pi's parentSession path and fields Arbor does not know come back.
    expect(JSON.parse(lines[0])).toEqual({ ...HEADER, id: session.id });
    expect(session.view.info.source).toMatchObject({ originalId: "pi1x-0001", header: { parentSession: HEADER.parentSession, fromPi2: { x: 1 } } });
  });

  it("the context is pi 1.6's at every leaf: system messages in it, context_edit applied on the active branch only", async () => {
    const { session } = await imported();
    const pi = piEntries(TEXT);
    // Every leaf (a1, inside its tool batch, gets Arbor's synthetic result on top: the oracle allows exactly that).
    expect(oracle.compareEveryLeaf(session.view, pi)).toBe(ENTRIES.length);
    expect(session.view.buildContext({ leafId: "u3" }).diagnostics).toEqual([]);

    // At u3: the system message leads; a3 is edited out, u2's and r1's content replaced (r1's string became a text block).
    const atU3 = session.view.buildContext({ leafId: "u3" }).messages;
    expect(atU3.map((message) => message.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant", "user", "user"]);
    expect(JSON.stringify(atU3)).not.toContain("hunter2");
    expect(atU3[3]).toMatchObject({ role: "toolResult", toolCallId: "toolu_1", content: [{ type: "text", text: "[file contents elided]" }] });
    expect(atU3[5]).toMatchObject({ role: "user", content: "my password is [removed]", timestamp: ms(8) });

    // Before the edits (at a3) nothing is edited; the side branch's edit (e3, of u1) counts only on that branch.
    expect(session.view.buildContext({ leafId: "a3" }).messages.map((message) => message.timestamp)).toEqual([ms(1), ms(2), ms(3), ms(4), ms(5), ms(8), ms(9)]);
    expect(session.view.buildContext({ leafId: "e3" }).messages.map((message) => message.role)).toEqual(["system", "assistant", "toolResult", "assistant"]);

    // After the retain-none compaction: its checkpoint, its summary, then what follows.
    expect(session.view.buildContext().messages.map((message) => message.role)).toEqual(["system", "compactionSummary", "user"]);
  });

  it("a context_edit appended later rebuilds the context as pi 1.6 does; a replacement without content is kept, reported and not applied", async () => {
    const { session } = await imported();
    await session.appendEntry({ type: "context_edit", targetId: "u4", replacement: null } as never);
    expect(session.view.buildContext().messages.map((message) => message.role)).toEqual(["system", "compactionSummary"]);
    // null on the compaction omits its checkpoint and its summary (pi 1.6's projection).
    await session.appendEntry({ type: "context_edit", targetId: "c1", replacement: null } as never);
    const text = exportPiSession(session.view);
    expect(json(session.view.buildContext().messages)).toEqual(json(buildSessionContext(piEntries(text) as never).messages));
    expect(session.view.buildContext().messages).toEqual([]);
    await session.appendEntry({ type: "context_edit", targetId: "u4", replacement: "not a message" } as never);
    const context = session.view.buildContext();
    expect(context.messages.map((message) => message.role)).toEqual(["user"]);
    expect(context.diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["context_edit_unapplied"]);
  });

  it("stats count usage entries (any kind), tool-result and compaction usage, and never add reasoning or cacheWrite1h again", async () => {
    const { session } = await imported();
    const stats = session.view.getStats();
    expect(stats.usageEntries).toBe(2);
    // assistants a1, a2, a3 + tool result r1 + usage entries w1, w2 + the compaction's summary call (pi 1.6 counts it too).
    expect(stats.tokens).toEqual({
      input: 20 + 10 + 10 + 7 + 0 + 100 + 1_500,
      output: 30 + 5 + 5 + 3 + 0 + 0 + 80,
      cacheRead: 1_000,
      cacheWrite: 400 + 5_000,
      total: 1_450 + 15 + 15 + 10 + 5_000 + 100 + 1_580,
    });
    expect(stats.cost).toBeCloseTo(0.002 + 0.0001 + 0.0001 + 0.00005 + 0.01875 + 0.0002 + 0.0005, 12);
    expect(stats.messages).toMatchObject({ user: 4, assistant: 3, toolResult: 1, other: 1 });
  });

  it("arbor import reports the warnings and arbor sessions shows the spend, usage entries included", { timeout: 60_000 }, async () => {
    const { path } = await imported();
    const db = join(dir, "cli.db");
    const result = await runArbor(["--db", db, "import", path]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/system message/);
    const [listed] = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { tokens: { total: number }; cost: number }[];
    expect(listed.tokens.total).toBe(8_170);
    expect(listed.cost).toBeCloseTo(0.0217, 10);
  });
});

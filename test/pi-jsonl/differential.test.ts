/**
 * Differential tests against pi 0.73.1's own pure functions: for every entry taken as leaf,
 * Arbor's context after import equals pi's buildSessionContext (messages, thinkingLevel, model)
 * and Arbor's convertToLlm equals pi's; export then pi's parse gives the same contexts again.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildSessionContext,
  convertToLlm as piConvertToLlm,
  migrateSessionEntries,
  parseSessionEntries,
} from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { exportPiSession, importPiSession } from "../../src/adapters/pi-jsonl/index.ts";
import { convertToLlm } from "../../src/core/convert-to-llm.ts";
import { createMemoryEventLog } from "../../src/store/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite-event-log.ts";
import type { SessionView } from "../../src/store/session-types.ts";
import { sharedPath } from "../shared-dir.ts";
import { buildTree, opsArbitrary, toJsonl } from "./tree-arbitrary.ts";

const SAMPLE = sharedPath("oracle/sample-session.jsonl");
const REAL_V1 = sharedPath("real-inputs/sessions/pi-v1-large-session-prefix25.jsonl");
const PAIRING_KINDS = new Set(["missing_tool_result", "orphan_tool_result", "duplicate_tool_result"]);

const dir = mkdtempSync(join(tmpdir(), "arbor-diff-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type AnyEntry = { type: string; id: string; parentId: string | null };

function piEntriesOf(text: string): AnyEntry[] {
  const fileEntries = parseSessionEntries(text) as unknown as AnyEntry[];
  migrateSessionEntries(fileEntries as never);
  return fileEntries.filter((entry) => entry.type !== "session");
}

function piContext(entries: AnyEntry[], leafId: string | null | undefined) {
  const context = buildSessionContext(entries as never, leafId);
  return { messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model };
}

/** JSON round trip: compare what a provider would receive (drops undefined-valued keys, as JSON does). */
function json<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value));
}

function isSynthetic(message: { role: string; details?: unknown }): boolean {
  return message.role === "toolResult" && (message.details as { arborSynthetic?: boolean } | undefined)?.arborSynthetic === true;
}

/** Tool calls of live assistants in pi's context that have no result after them. */
function unansweredCalls(messages: readonly { role: string; content?: unknown; stopReason?: string; toolCallId?: string }[]): string[] {
  const open: string[] = [];
  for (const message of messages) {
    if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted" && Array.isArray(message.content)) {
      for (const block of message.content as { type: string; id: string }[]) if (block.type === "toolCall") open.push(block.id);
    } else if (message.role === "toolResult") {
      open.splice(open.indexOf(message.toolCallId!), 1);
    }
  }
  return open;
}

/**
 * Compares Arbor's context with pi's for every entry as leaf; `idOf` maps pi ids to Arbor ids.
 * A leaf inside a tool batch (assistant with calls, results still to come) is where Arbor repairs
 * on purpose: there Arbor = pi + one synthetic error result per unanswered call, and nothing else.
 */
function compareEveryLeaf(view: SessionView, piEntries: AnyEntry[], idOf: (piId: string) => string): number {
  let compared = 0;
  for (const piEntry of piEntries) {
    const expected = piContext(piEntries, piEntry.id);
    const actual = view.buildContext({ leafId: idOf(piEntry.id) });
    const repairs = actual.diagnostics.filter((diagnostic) => PAIRING_KINDS.has(diagnostic.kind));
    const synthetic = actual.messages.filter(isSynthetic);
    expect(repairs.map((diagnostic) => diagnostic.kind).every((kind) => kind === "missing_tool_result")).toBe(true);
    expect(synthetic.map((message) => (message as { toolCallId: string }).toolCallId)).toEqual(unansweredCalls(expected.messages as never));
    expect(repairs.length).toBe(synthetic.length);
    const withoutRepairs = actual.messages.filter((message) => !isSynthetic(message));
    expect(json(withoutRepairs)).toEqual(json(expected.messages));
    expect(actual.thinkingLevel).toEqual(expected.thinkingLevel);
    expect(json(actual.model)).toEqual(json(expected.model));
    expect(json(convertToLlm(expected.messages as never))).toEqual(json(piConvertToLlm(expected.messages as never)));
    expect(json(convertToLlm(withoutRepairs))).toEqual(json(piConvertToLlm(expected.messages as never)));
    compared += 1;
  }
  return compared;
}

/** Export, parse with pi: every leaf again, and pi's default leaf (last line) is Arbor's leaf. */
function compareExport(view: SessionView): void {
  const exported = piEntriesOf(exportPiSession(view));
  expect(exported.map((entry) => entry.id).sort()).toEqual(view.getEntries().map((entry) => entry.id).sort());
  const ids = new Set(exported.map((entry) => entry.id));
  for (const entry of exported) if (entry.parentId !== null) expect(ids.has(entry.parentId)).toBe(true);
  compareEveryLeaf(view, exported, (id) => id);
  if (view.leafId !== null) {
    const piDefault = piContext(exported, undefined);
    const arbor = view.buildContext();
    expect(json(arbor.messages.filter((message) => !isSynthetic(message)))).toEqual(json(piDefault.messages));
    expect(json(arbor.model)).toEqual(json(piDefault.model));
    expect(arbor.thinkingLevel).toEqual(piDefault.thinkingLevel);
  }
}

describe("differential against pi 0.73.1", () => {
  it("matches pi on the oracle sample session, for every leaf, and after export", async () => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const text = readFileSync(SAMPLE, "utf8");
    const { session, diagnostics } = await importPiSession(repo, SAMPLE);
    expect(diagnostics).toEqual([]);
    const piEntries = piEntriesOf(text);
    expect(compareEveryLeaf(session.view, piEntries, (id) => id)).toBe(piEntries.length);
    // The documented oracle facts (pi-behaviour.md §10).
    expect(session.view.leafId).toBe("i0000001");
    const atLeaf = session.view.buildContext();
    expect(atLeaf.messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant", "branchSummary", "user", "assistant", "custom"]);
    expect(atLeaf.model).toEqual({ provider: "anthropic", modelId: "claude-sonnet-4-5" });
    expect(session.view.buildContext({ leafId: "a0000005" }).messages[0].role).toBe("compactionSummary");
    expect(session.view.name).toBe("demo session");
    expect(session.view.getLabel("u0000001")).toBe("start");
    compareExport(session.view);
    // Move the leaf to an entry that has children: it is written last, after its own child, and
    // pi still resolves every parent and opens the export on the same leaf.
    await session.moveLeaf("a0000002");
    const lines = exportPiSession(session.view).trim().split("\n");
    expect(JSON.parse(lines[lines.length - 1]).id).toBe("a0000002");
    expect(lines.findIndex((line) => JSON.parse(line).parentId === "a0000002")).toBeLessThan(lines.length - 1);
    compareExport(session.view);
  });

  it("matches pi on the real v1 session (migrated in memory, ids mapped by position)", async () => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const { session, diagnostics, fromVersion } = await importPiSession(repo, REAL_V1);
    expect(fromVersion).toBe(1);
    expect(diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["migrated"]);
    const piEntries = piEntriesOf(readFileSync(REAL_V1, "utf8"));
    const arborEntries = session.view.getEntries();
    expect(arborEntries.map((entry) => entry.type)).toEqual(piEntries.map((entry) => entry.type));
    const idMap = new Map(piEntries.map((entry, index) => [entry.id, arborEntries[index].id]));
    // v1 becomes a chain, as in pi.
    arborEntries.forEach((entry, index) => expect(entry.parentId).toBe(index === 0 ? null : arborEntries[index - 1].id));
    expect(compareEveryLeaf(session.view, piEntries, (id) => idMap.get(id)!)).toBe(24);
    compareExport(session.view);
  });

  it("matches pi on 200 generated trees for every leaf, and after export", async () => {
    let trees = 0;
    let leaves = 0;
    const kinds = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(opsArbitrary, fc.nat(1000), async (ops, finalLeafPick) => {
        const { entries, boundaries } = buildTree(ops, trees);
        const path = join(dir, `tree-${trees}.jsonl`);
        writeFileSync(path, toJsonl(entries));
        trees += 1;
        for (const type of new Set(entries.map((entry) => entry.type))) kinds.set(type, (kinds.get(type) ?? 0) + 1);
        if (entries.filter((entry) => entry.parentId === null).length > 1) kinds.set("several roots", (kinds.get("several roots") ?? 0) + 1);
        const repo = createSessionRepository({ log: createMemoryEventLog() });
        const { session } = await importPiSession(repo, path);
        const piEntries = piEntriesOf(readFileSync(path, "utf8"));
        leaves += compareEveryLeaf(session.view, piEntries, (id) => id);
        if (boundaries.length > 0) await session.moveLeaf(boundaries[finalLeafPick % boundaries.length]);
        compareExport(session.view);
      }),
      { numRuns: 200, seed: 20261130 },
    );
    expect(trees).toBeGreaterThanOrEqual(200);
    expect(leaves).toBeGreaterThan(1000);
    // The generated trees really contain what they are meant to test.
    for (const kind of ["compaction", "branch_summary", "label", "model_change", "thinking_level_change", "custom", "custom_message", "future_kind", "several roots"]) {
      expect(kinds.get(kind) ?? 0, kind).toBeGreaterThanOrEqual(20);
    }
  });

  it("matches pi on the session index's open path: the sample and 100 generated trees in SQLite files, reopened lazily, every leaf", async () => {
    let lazy = 0;
    let leaves = 0;
    const reopen = async (path: string, source: string) => {
      const log = createSqliteEventLog({ path: join(dir, `${path}.db`), synchronous: "OFF" });
      const { session } = await importPiSession(createSessionRepository({ log }), source);
      await log.close();
      const again = createSqliteEventLog({ path: join(dir, `${path}.db`), synchronous: "OFF" });
      const reopened = await createSessionRepository({ log: again }).open(session.id);
      if ("headState" in reopened.view) lazy += 1;
      return { view: reopened.view, close: () => again.close() };
    };
    const sample = await reopen("sample-index", SAMPLE);
    leaves += compareEveryLeaf(sample.view, piEntriesOf(readFileSync(SAMPLE, "utf8")), (id) => id);
    expect(sample.view.name).toBe("demo session");
    expect(sample.view.getLabel("u0000001")).toBe("start");
    await sample.close();
    let trees = 0;
    await fc.assert(
      fc.asyncProperty(opsArbitrary, async (ops) => {
        const { entries } = buildTree(ops, 1000 + trees);
        const path = join(dir, `index-tree-${trees}.jsonl`);
        writeFileSync(path, toJsonl(entries));
        const opened = await reopen(`index-tree-${trees}`, path);
        trees += 1;
        leaves += compareEveryLeaf(opened.view, piEntriesOf(readFileSync(path, "utf8")), (id) => id);
        await opened.close();
      }),
      { numRuns: 100, seed: 20261201 },
    );
    // The trees pi resolves with missing parents are folded (the index's runs cannot describe them); most open lazily.
    expect(lazy).toBeGreaterThan(50);
    expect(leaves).toBeGreaterThan(500);
  });
});

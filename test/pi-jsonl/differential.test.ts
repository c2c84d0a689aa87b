/**
 * Differential tests against pi 0.73.1's own pure functions: for every entry taken as leaf,
 * Arbor's context after import equals pi's buildSessionContext (messages, thinkingLevel, model)
 * and Arbor's convertToLlm equals pi's; export then pi's parse gives the same contexts again.
 * Kept beside the pi 1.6 differential (`pi16-differential.test.ts`) for v1–v3 files without pi 1.x
 * entries: pi 1.6 still reads them and builds the same contexts as pi 0.73.1 there.
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
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import type { SessionView } from "../../src/store/session-types.ts";
import { sharedPath } from "../shared-dir.ts";
import { piOracle } from "./pi-oracle.ts";
import { buildTree, opsArbitrary, toJsonl } from "./tree-arbitrary.ts";

const SAMPLE = sharedPath("oracle/sample-session.jsonl");
const REAL_V1 = sharedPath("real-inputs/sessions/pi-v1-large-session-prefix25.jsonl");

const dir = mkdtempSync(join(tmpdir(), "arbor-diff-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pi073 = piOracle({ parseSessionEntries, migrateSessionEntries, buildSessionContext, convertToLlm: piConvertToLlm } as never);
const piEntriesOf = pi073.entriesOf;
const compareEveryLeaf = pi073.compareEveryLeaf;
const compareExport = (view: SessionView) => pi073.compareExport(view);

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

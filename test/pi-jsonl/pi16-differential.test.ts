/**
 * Differential tests against pi 1.6's own functions (`@earendil-works/pi-coding-agent` 1.6.0):
 * for every entry taken as leaf of the real sessions, the oracle sample and generated pi 1.x
 * sessions (system messages, usage and context_edit entries, checkpointed and retain-none
 * compactions, deferred assistants), Arbor's context after import equals pi 1.6's
 * buildSessionContext, and what reaches a provider equals pi's convertToLlm without system
 * messages. Then export, parsed by pi 1.6, gives the same contexts again; the session index's
 * lazy open path (SQLite, stored context text) gives them too.
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSessionContext, convertToLlm, CURRENT_SESSION_VERSION, migrateSessionEntries, parseSessionEntries } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { importPiSession, PI_SESSION_VERSION } from "../../src/adapters/pi-jsonl/index.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { sharedPath } from "../shared-dir.ts";
import { piOracle } from "./pi-oracle.ts";
import { buildTree, ops1xArbitrary, toJsonl, type PiEntry } from "./tree-arbitrary.ts";

const pi16 = piOracle({ parseSessionEntries, migrateSessionEntries, buildSessionContext, convertToLlm } as never);
const SAMPLE = sharedPath("oracle/sample-session.jsonl");
const REAL_DIR = sharedPath("real-inputs/sessions");
const REAL = readdirSync(REAL_DIR)
  .filter((name) => name.endsWith(".jsonl"))
  .map((name) => join(REAL_DIR, name));

const dir = mkdtempSync(join(tmpdir(), "arbor-pi16-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a generated tree holds that is new in pi 1.x, for the coverage check. */
function features(entries: PiEntry[]): string[] {
  const found = new Set<string>();
  for (const entry of entries) {
    const message = entry.message as { role?: string; stopReason?: string } | undefined;
    if (message?.role === "system") found.add("system message");
    if (message?.stopReason === "deferred") found.add("deferred");
    if (entry.type === "usage") found.add("usage");
    if (entry.type === "context_edit") found.add(entry.replacement === null ? "context_edit omit" : "context_edit content");
    if (entry.type === "compaction" && entry.systemMessage) found.add("compaction checkpoint");
    if (entry.type === "compaction" && entry.firstKeptEntryId === entry.id) found.add("retain-none compaction");
    if (entry.type === "branch_summary" && entry.usage) found.add("branch_summary usage");
  }
  return [...found];
}

describe("differential against pi 1.6", () => {
  it("pi 1.6 is the format Arbor writes (session version 3) and still reads v1 and v2 files", () => {
    expect(CURRENT_SESSION_VERSION).toBe(PI_SESSION_VERSION);
    const v1 = parseSessionEntries(readFileSync(REAL[0], "utf8"));
    migrateSessionEntries(v1);
    expect((v1[0] as { version?: number }).version).toBe(3);
    expect(v1.slice(1).every((entry) => typeof (entry as { id?: unknown }).id === "string")).toBe(true);
  });

  it("matches pi 1.6 on the oracle sample session for every leaf, and after export", async () => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const { session, diagnostics } = await importPiSession(repo, SAMPLE);
    expect(diagnostics).toEqual([]);
    const entries = pi16.entriesOf(readFileSync(SAMPLE, "utf8"));
    expect(pi16.compareEveryLeaf(session.view, entries)).toBe(entries.length);
    pi16.compareExport(session.view);
  });

  it.each(REAL.map((path) => [path.slice(REAL_DIR.length + 1), path]))("matches pi 1.6 on the real session %s for every leaf, and after export", async (_name, path) => {
    const repo = createSessionRepository({ log: createMemoryEventLog() });
    const { session } = await importPiSession(repo, path);
    const entries = pi16.entriesOf(readFileSync(path, "utf8"));
    const arborEntries = session.view.getEntries();
    expect(arborEntries.map((entry) => entry.type)).toEqual(entries.map((entry) => entry.type));
    // A v1 file gets fresh ids on both sides (pi draws random ones): map them by position.
    const idMap = new Map(entries.map((entry, index) => [entry.id, arborEntries[index].id]));
    expect(pi16.compareEveryLeaf(session.view, entries, (id) => idMap.get(id)!)).toBe(entries.length);
    pi16.compareExport(session.view);
  });

  it("applies only the edits among the selected entries, as pi 1.6: an edit left behind a compaction's kept range does not count, one inside it does", async () => {
    const at = (n: number) => `2026-12-01T00:00:${String(n).padStart(2, "0")}.000Z`;
    const user = (id: string, parentId: string | null, n: number) => ({ type: "message", id, parentId, timestamp: at(n), message: { role: "user", content: `text ${id}`, timestamp: n } });
    const entries = [
      { type: "message", id: "s1", parentId: null, timestamp: at(1), message: { role: "system", content: "You are pi.", timestamp: 1 } },
      user("u1", "s1", 2),
      // Hand-written: these edits name entries that come after them on the path.
      { type: "context_edit", id: "e1", parentId: "u1", timestamp: at(3), targetId: "u2", replacement: { content: "edited before the kept range" } },
      user("u2", "e1", 4),
      { type: "context_edit", id: "e2", parentId: "u2", timestamp: at(5), targetId: "u3", replacement: null },
      { type: "message", id: "s2", parentId: "e2", timestamp: at(6), message: { role: "system", content: "", sections: { extra: "x" }, timestamp: 6 } },
      user("u3", "s2", 7),
      { type: "compaction", id: "c1", parentId: "u3", timestamp: at(8), summary: "so far", firstKeptEntryId: "u2", tokensBefore: 10, systemMessage: { role: "system", content: "checkpoint", timestamp: 8 } },
      user("u4", "c1", 9),
    ];
    const path = join(dir, "edit-ranges.jsonl");
    writeFileSync(path, toJsonl(entries as never));
    const { session } = await importPiSession(createSessionRepository({ log: createMemoryEventLog() }), path);
    expect(pi16.compareEveryLeaf(session.view, pi16.entriesOf(readFileSync(path, "utf8")))).toBe(entries.length);
    // At u4: the checkpoint, the summary, u2 unedited (e1 is not selected), no u3 (e2 is), no s2 (a kept system message), u4.
    expect(session.view.buildContext().messages.map((message) => ("content" in message ? message.content : message.role))).toEqual(["checkpoint", "compactionSummary", "text u2", "text u4"]);
    // The same through the session index's plans (SQLite, reopened lazily).
    const db = join(dir, "edit-ranges.db");
    const log = createSqliteEventLog({ path: db, synchronous: "OFF" });
    const { session: stored } = await importPiSession(createSessionRepository({ log }), path);
    await log.close();
    const again = createSqliteEventLog({ path: db, synchronous: "OFF" });
    const reopened = await createSessionRepository({ log: again }).open(stored.id);
    expect("headState" in reopened.view).toBe(true);
    expect(pi16.compareEveryLeaf(reopened.view, pi16.entriesOf(readFileSync(path, "utf8")))).toBe(entries.length);
    await again.close();
  });

  it("matches pi 1.6 on 200 generated pi 1.x trees for every leaf, and after export", async () => {
    let trees = 0;
    let leaves = 0;
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(ops1xArbitrary, fc.nat(1000), async (ops, finalLeafPick) => {
        const { entries, boundaries } = buildTree(ops, trees);
        for (const feature of features(entries)) seen.set(feature, (seen.get(feature) ?? 0) + 1);
        const path = join(dir, `tree-${trees}.jsonl`);
        writeFileSync(path, toJsonl(entries));
        trees += 1;
        const repo = createSessionRepository({ log: createMemoryEventLog() });
        const { session, diagnostics } = await importPiSession(repo, path);
        expect(diagnostics.filter((diagnostic) => diagnostic.kind !== "unmodeled" && diagnostic.kind !== "unknown_entry")).toEqual([]);
        leaves += pi16.compareEveryLeaf(session.view, pi16.entriesOf(readFileSync(path, "utf8")));
        if (boundaries.length > 0) await session.moveLeaf(boundaries[finalLeafPick % boundaries.length]);
        pi16.compareExport(session.view);
      }),
      { numRuns: 200, seed: 20261207 },
    );
    expect(leaves).toBeGreaterThan(2000);
    // The generated trees really contain what pi 1.x writes.
    for (const feature of ["system message", "deferred", "usage", "context_edit omit", "context_edit content", "compaction checkpoint", "retain-none compaction", "branch_summary usage"]) {
      expect(seen.get(feature) ?? 0, feature).toBeGreaterThanOrEqual(15);
    }
  });

  it("matches pi 1.6 on the session index's open path: 100 generated pi 1.x trees in SQLite files, reopened lazily, every leaf", async () => {
    let lazy = 0;
    let leaves = 0;
    let trees = 0;
    await fc.assert(
      fc.asyncProperty(ops1xArbitrary, async (ops) => {
        const { entries } = buildTree(ops, 1000 + trees);
        const source = join(dir, `index-tree-${trees}.jsonl`);
        const db = join(dir, `index-tree-${trees}.db`);
        trees += 1;
        writeFileSync(source, toJsonl(entries));
        const log = createSqliteEventLog({ path: db, synchronous: "OFF" });
        const { session } = await importPiSession(createSessionRepository({ log }), source);
        await log.close();
        const again = createSqliteEventLog({ path: db, synchronous: "OFF" });
        const reopened = await createSessionRepository({ log: again }).open(session.id);
        if ("headState" in reopened.view) lazy += 1;
        leaves += pi16.compareEveryLeaf(reopened.view, pi16.entriesOf(readFileSync(source, "utf8")));
        await again.close();
      }),
      { numRuns: 100, seed: 20261208 },
    );
    expect(lazy).toBeGreaterThan(50);
    expect(leaves).toBeGreaterThan(1000);
  });
});

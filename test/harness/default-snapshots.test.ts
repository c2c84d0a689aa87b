/**
 * The harness and the CLI open a snapshot store beside the SQLite log they open themselves
 * (issue 17): a large session opens from the log's session index (no checkpoint needed; the
 * snapshot store serves sessions the index cannot describe), deleting the session deletes its
 * index rows and head, and an unusable snapshot file is ignored (left untouched) instead of
 * failing the open.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/cli/store-context.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteSnapshotStore, snapshotPathFor } from "../../src/store/session/session-snapshots.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-default-snap-"));
  dirs.push(dir);
  return dir;
};

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

/** A session of `count` user messages written through a repository without snapshots; returns its id and its folded context. */
async function largeSession(path: string, count: number) {
  const log = createSqliteEventLog({ path, synchronous: "OFF" });
  const repo = createSessionRepository({ log });
  const session = await repo.create({ cwd: "/w" });
  for (let start = 0; start < count; start += 200) {
    await session.appendEntries(Array.from({ length: 200 }, (_, index) => ({ type: "message" as const, message: user(`m${start + index}`) })));
  }
  const context = session.view.buildContext();
  await log.close();
  return { id: session.id, context };
}

describe("default snapshot store", () => {
  it("the harness opens a large session from the log's session index (no checkpoint needed), and deleting it removes the index rows and head", async () => {
    const dir = tempDir();
    const path = join(dir, "arbor.db");
    const { id, context } = await largeSession(path, 1200);
    expect(snapshotPathFor(path)).toBe(join(dir, "arbor.snapshots.db"));

    let harness = await createHarness({ models: { m: scriptedModel([]) }, eventLogPath: path, sessionId: id });
    expect("headState" in harness.session.view).toBe(true);
    expect(harness.session.view.buildContext()).toEqual(context);
    await harness.close();
    // The index (kept by the writer) made the first open cheap: no checkpoint was written.
    const peek = createSqliteSnapshotStore({ path: snapshotPathFor(path) });
    expect(peek.read(id)).toBeUndefined();
    peek.close();

    harness = await createHarness({ models: { m: scriptedModel([]) }, eventLogPath: path, sessionId: id });
    expect(harness.session.view.buildContext()).toEqual(context);
    await harness.close();

    const store = openStore({ db: path });
    await store.repo.delete(id);
    await store.close();
    const db = new Database(path, { readonly: true });
    for (const table of ["arbor_entry_index", "arbor_entry_streams", "arbor_session_heads"]) {
      expect(db.prepare(`SELECT count(*) FROM ${table} WHERE stream_id = ?`).pluck().get(`session-${id}`), table).toBe(0);
    }
    db.close();
  });

  it("the CLI store restores from the snapshot; read-only stores and an unusable snapshot file open without one", async () => {
    const dir = tempDir();
    const path = join(dir, "arbor.db");
    const { id, context } = await largeSession(path, 1100);
    const first = openStore({ db: path });
    expect((await first.openSession(id)).view.buildContext()).toEqual(context);
    await first.close();
    expect(existsSync(snapshotPathFor(path))).toBe(true);
    const readOnly = openStore({ db: path }, { readOnly: true });
    expect((await readOnly.openSession(id)).view.buildContext()).toEqual(context);
    await readOnly.close();

    const other = join(dir, "other.db");
    const { id: otherId, context: otherContext } = await largeSession(other, 1000);
    writeFileSync(snapshotPathFor(other), "not a database\n");
    const store = openStore({ db: other });
    expect((await store.openSession(otherId)).view.buildContext()).toEqual(otherContext);
    await store.close();
    expect(readFileSync(snapshotPathFor(other), "utf8")).toBe("not a database\n");
  });
});

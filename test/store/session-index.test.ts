/**
 * The session index (issue 17): a session opened from it (a stored head plus the events after
 * it, entries read lazily, `lazy-session-view.ts`) answers exactly like the same session folded
 * from the log, on real SQLite files: after appends, compactions, leaf moves, branch summaries,
 * labels and unknown entry kinds, after appends through the reopened handle, after another
 * process was killed with SIGKILL mid-write, on a read-only open, and on a log whose index is
 * behind (written before the index existed).
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import type { LazySessionView } from "../../src/store/session/lazy-session-view.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import type { SessionHandle, SessionView } from "../../src/store/session-types.ts";
import { createSessionView } from "../../src/store/session/session-view.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { spawnTsx } from "./child-process.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-session-index-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `log-${files++}.db`);

const isLazy = (view: SessionView) => "headState" in view && !(view as LazySessionView).inflated;

/** The session folded from the log the ordinary way. */
async function folded(log: EventLog, id: string): Promise<SessionView> {
  const view = createSessionView(id);
  view.applyAll(await log.readStream(sessionStreamId(id)));
  return view;
}

/** Every answer of `lazy` equals `reference`'s (the contexts at every entry, children, branches, labels, stats, activity). */
function expectSame(lazy: SessionView, reference: SessionView): void {
  expect(lazy.version).toBe(reference.version);
  expect(lazy.leafId).toBe(reference.leafId);
  expect(lazy.name).toBe(reference.name);
  expect(lazy.info).toEqual(reference.info);
  expect(lazy.activity).toEqual(reference.activity);
  expect(lazy.getStats()).toEqual(reference.getStats());
  expect(lazy.buildContext()).toEqual(reference.buildContext());
  const ids = reference.getEntries().map((entry) => entry.id);
  for (const id of ids) {
    expect(lazy.getEntry(id)).toEqual(reference.getEntry(id));
    expect(lazy.buildContext({ leafId: id })).toEqual(reference.buildContext({ leafId: id }));
    expect(lazy.getChildren(id).map((entry) => entry.id)).toEqual(reference.getChildren(id).map((entry) => entry.id));
    expect(lazy.getBranch(id).map((entry) => entry.id)).toEqual(reference.getBranch(id).map((entry) => entry.id));
    expect(lazy.getLabel(id)).toBe(reference.getLabel(id));
  }
  expect(lazy.getEntry("nope")).toBeUndefined();
}

const text = (role: "user" | "assistant", value: string, calls: string[] = []) =>
  role === "user"
    ? { role, content: value, timestamp: 1 }
    : { role, content: [{ type: "text", text: value }, ...calls.map((id) => ({ type: "toolCall", id, name: "read", arguments: {} }))], api: "a", provider: "p", model: "m", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, stopReason: calls.length ? "toolUse" : "stop", timestamp: 2 };

type Step =
  | { kind: "user" | "assistant" | "result" | "thinking" | "model" | "label" | "name" | "custom" | "future" | "reopen" }
  | { kind: "move" | "compaction" | "branchSummary"; pick: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<Step>({ kind: "user" }, { kind: "assistant" }, { kind: "result" }) },
  { weight: 3, arbitrary: fc.constantFrom<Step>({ kind: "thinking" }, { kind: "model" }, { kind: "label" }, { kind: "name" }, { kind: "custom" }, { kind: "future" }, { kind: "reopen" }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom("move" as const, "compaction" as const, "branchSummary" as const), pick: fc.nat(1000) }) },
);

async function applyStep(session: SessionHandle, step: Step, counter: { calls: string[]; n: number }): Promise<void> {
  const n = counter.n++;
  const branch = session.view.getBranch();
  const pickFrom = <T>(items: T[], pick: number) => items[pick % items.length];
  switch (step.kind) {
    case "user":
      await session.appendEntry({ type: "message", message: text("user", `u${n}`) });
      break;
    case "assistant": {
      const calls = n % 2 === 0 ? [`c${n}`] : [];
      counter.calls.push(...calls);
      await session.appendEntry({ type: "message", message: text("assistant", `a${n}`, calls) });
      break;
    }
    case "result":
      await session.appendEntry({ type: "message", message: { role: "toolResult", toolCallId: counter.calls.shift() ?? "stray", toolName: "read", content: [{ type: "text", text: `r${n}` }], isError: false, timestamp: 3 } });
      break;
    case "thinking":
      await session.appendEntry({ type: "thinking_level_change", thinkingLevel: n % 2 ? "high" : "low" });
      break;
    case "model":
      await session.appendEntry({ type: "model_change", provider: "q", modelId: `m${n}` });
      break;
    case "label":
      if (branch.length) await session.appendEntry({ type: "label", targetId: pickFrom(branch, n).id, label: n % 3 ? `l${n}` : undefined });
      break;
    case "name":
      await session.appendEntry({ type: "session_info", name: `name ${n}` });
      break;
    case "custom":
      await session.appendEntry({ type: "custom_message", customType: "note", content: `c${n}`, display: true });
      break;
    case "future":
      await session.appendEntry({ type: "future_kind", payload: n });
      break;
    case "move": {
      const entries = session.view.getEntries();
      if (entries.length) await session.moveLeaf(pickFrom(entries, step.pick).id);
      break;
    }
    case "compaction":
      if (branch.length) await session.appendEntry({ type: "compaction", summary: `s${n}`, firstKeptEntryId: pickFrom(branch, step.pick).id, tokensBefore: 5 });
      break;
    case "branchSummary": {
      const entries = session.view.getEntries();
      if (entries.length) await session.appendEntry({ type: "branch_summary", fromId: pickFrom(entries, step.pick).id, summary: n % 4 ? `b${n}` : "" });
      break;
    }
    case "reopen":
      break;
  }
}

describe("session index: opening from it equals folding the log", () => {
  it("after random appends, compactions, leaf moves, branch summaries and reopenings (real SQLite files)", async () => {
    let lazyOpens = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 40 }), async (steps) => {
        const path = freshPath();
        let log = createSqliteEventLog({ path, synchronous: "OFF" });
        let session = await createSessionRepository({ log }).create({ cwd: "/w" });
        const counter = { calls: [] as string[], n: 0 };
        for (const step of steps) {
          if (step.kind === "reopen") {
            await log.close();
            log = createSqliteEventLog({ path, synchronous: "OFF" });
            session = await createSessionRepository({ log }).open(session.id);
            if (isLazy(session.view)) lazyOpens += 1;
          }
          await applyStep(session, step, counter);
        }
        await log.close();
        log = createSqliteEventLog({ path, synchronous: "OFF" });
        const reopened = await createSessionRepository({ log }).open(session.id);
        expect(isLazy(reopened.view)).toBe(true);
        lazyOpens += 1;
        expectSame(reopened.view, await folded(log, session.id));
        await log.close();
      }),
      { numRuns: 60, seed: 17 },
    );
    expect(lazyOpens).toBeGreaterThan(60);
  });

  it("keeps answering like the fold after appends through the reopened handle, past a stored head", async () => {
    const path = freshPath();
    let log = createSqliteEventLog({ path, synchronous: "OFF" });
    const created = await createSessionRepository({ log }).create();
    for (let turn = 0; turn < 30; turn++) await created.appendEntry({ type: "message", message: text(turn % 2 ? "assistant" : "user", `t${turn}`) });
    await log.close();
    log = createSqliteEventLog({ path, synchronous: "OFF" });
    const session = await createSessionRepository({ log }).open(created.id);
    expect(isLazy(session.view)).toBe(true);
    session.view.buildContext();
    // 150 more events: the handle stores a newer head on the way, and the next open folds only what follows it.
    for (let turn = 0; turn < 150; turn++) await session.appendEntry({ type: "message", message: text(turn % 2 ? "assistant" : "user", `n${turn}`) });
    await session.moveLeaf(session.view.getBranch()[20].id);
    await session.appendEntry({ type: "compaction", summary: "s", firstKeptEntryId: session.view.getBranch()[10].id, tokensBefore: 1 });
    await session.appendEntry({ type: "message", message: text("user", "after") });
    expect(isLazy(session.view)).toBe(true);
    expectSame(session.view, await folded(log, created.id));
    const head = new Database(path, { readonly: true }).prepare("SELECT version FROM arbor_session_heads").pluck().get() as number;
    expect(head).toBeGreaterThan(100);
    await log.close();
    log = createSqliteEventLog({ path, synchronous: "OFF" });
    const again = await createSessionRepository({ log }).open(created.id);
    expectSame(again.view, await folded(log, created.id));
    // A whole-tree operation folds the stream once; answers stay the same.
    expect(again.view.getTree().length).toBe(1);
    expect((again.view as LazySessionView).inflated).toBe(true);
    expectSame(again.view, await folded(log, created.id));
    await log.close();
  });

  it("after kill -9 of a process writing the session, the index and the head reopen like the fold", { timeout: 60_000 }, async () => {
    const path = freshPath();
    const log = createSqliteEventLog({ path, synchronous: "NORMAL" });
    const created = await createSessionRepository({ log }).create();
    await log.close();
    const writer = spawnTsx("test/store/fixtures-log/session-writer.ts", [path, created.id]);
    for (let line = 0; line < 120; line++) expect(await writer.nextLine()).toMatch(/^turn \d+$/);
    writer.process.kill("SIGKILL");
    expect((await writer.exited).signal).toBe("SIGKILL");
    const reopenedLog = createSqliteEventLog({ path });
    const reopened = await createSessionRepository({ log: reopenedLog }).open(created.id);
    expect(isLazy(reopened.view)).toBe(true);
    expect(reopened.view.version).toBeGreaterThan(240);
    expectSame(reopened.view, await folded(reopenedLog, created.id));
    await reopenedLog.close();
  });

  it("opens read-only from the index, and folds a log whose index is behind (written before it existed)", async () => {
    const path = freshPath();
    let log = createSqliteEventLog({ path, synchronous: "OFF" });
    const created = await createSessionRepository({ log }).create();
    for (let turn = 0; turn < 20; turn++) await created.appendEntry({ type: "message", message: text(turn % 2 ? "assistant" : "user", `t${turn}`) });
    await log.close();
    const readOnly = createSqliteEventLog({ path, readOnly: true });
    const fromIndex = await createSessionRepository({ log: readOnly }).open(created.id);
    expect(isLazy(fromIndex.view)).toBe(true);
    expectSame(fromIndex.view, await folded(readOnly, created.id));
    await readOnly.close();
    // A log as an earlier Arbor left it: no index tables at all.
    const old = freshPath();
    copyFileSync(path, old);
    const db = new Database(old);
    db.exec("DROP TABLE arbor_entry_index; DROP TABLE arbor_entry_streams; DROP TABLE arbor_session_heads;");
    db.close();
    const oldReadOnly = createSqliteEventLog({ path: old, readOnly: true });
    expect(oldReadOnly.sessionIndex).toBeUndefined();
    const foldedOld = await createSessionRepository({ log: oldReadOnly }).open(created.id);
    expect(isLazy(foldedOld.view)).toBe(false);
    expectSame(foldedOld.view, await folded(oldReadOnly, created.id));
    await oldReadOnly.close();
    // Opened for writing, the index is built and the head stored: the next open is lazy, the events untouched.
    log = createSqliteEventLog({ path: old });
    const before = await log.readStream(sessionStreamId(created.id));
    const first = await createSessionRepository({ log }).open(created.id);
    expect(isLazy(first.view)).toBe(false);
    await log.close();
    log = createSqliteEventLog({ path: old });
    const second = await createSessionRepository({ log }).open(created.id);
    expect(isLazy(second.view)).toBe(true);
    expectSame(second.view, await folded(log, created.id));
    expect(await log.readStream(sessionStreamId(created.id))).toEqual(before);
    await log.close();
  });
});

/**
 * In-process subscribers of the SQLite log take the writer's committed events without reading
 * them back (`log-subscription.ts`), and fall back to reading the log whenever that could miss
 * or repeat something: another connection's commits in between, a failed append in a group, an
 * idempotent retry, a delete. Checked against `readAll` (what a read from the log delivers), with
 * the file shared by two logs (two connections, as two processes) appending interleaved.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { EventLog, StoredEvent, SubscribeOptions } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { note, testRegistry } from "./event-log.contract.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-handover-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const open: EventLog[] = [];
afterEach(async () => {
  for (const log of open.splice(0)) await log.close();
});

const sqlite = (path = join(dir, `log-${files++}.db`)): EventLog => {
  const log = createSqliteEventLog({ path, registry: testRegistry(), pollIntervalMs: 5 });
  open.push(log);
  return log;
};

/** Collects a subscription's events; `until(n)` resolves once it holds n of them. */
function follow(log: EventLog, options: SubscribeOptions) {
  const events: StoredEvent[] = [];
  let waiting: { count: number; resolve: () => void } | undefined;
  const subscription = log.subscribe(options).subscribe((event) => {
    events.push(event);
    if (waiting && events.length >= waiting.count) waiting.resolve();
  });
  return {
    events,
    subscription,
    until: (count: number) => (events.length >= count ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { count, resolve }))),
  };
}

const key = (event: StoredEvent) => `${event.globalPosition} ${event.streamId} v${event.version} ${JSON.stringify(event.data)}`;

describe("subscriptions fed by the writer", () => {
  it("deliver what a read delivers, in order, when this log's commits interleave with another connection's", async () => {
    const path = join(dir, `shared-${files++}.db`);
    const here = sqlite(path);
    const other = sqlite(path);
    const all = follow(here, {});
    const stream = follow(here, { streamId: "s-1", fromVersion: 3 });
    const typed = follow(here, { types: ["note.removed"] });
    for (let round = 0; round < 60; round++) {
      const writes: Promise<unknown>[] = [];
      // Same-tick appends of this log are one group commit; the other log's land between groups.
      writes.push(here.append(`s-${round % 3}`, [note(`here ${round}`)]));
      if (round % 2 === 0) writes.push(here.append(`s-${(round + 1) % 3}`, [note(`here' ${round}`), { type: "note.removed", data: { n: round } }]));
      if (round % 5 === 0) await Promise.all(writes.splice(0));
      if (round % 3 === 0) writes.push(other.append(`s-${round % 3}`, [note(`other ${round}`)]));
      await Promise.all(writes);
    }
    const expected = await here.readAll();
    await all.until(expected.length);
    expect(all.events.map(key)).toEqual(expected.map(key));
    const expectedStream = expected.filter((event) => event.streamId === "s-1" && event.version > 3);
    await stream.until(expectedStream.length);
    expect(stream.events.map(key)).toEqual(expectedStream.map(key));
    const expectedTyped = expected.filter((event) => event.type === "note.removed");
    await typed.until(expectedTyped.length);
    expect(typed.events.map(key)).toEqual(expectedTyped.map(key));
    // Nothing more arrives later (no duplicate delivered after the comparison).
    await here.append("s-9", [note("last")]);
    await all.until(expected.length + 1);
    expect(all.events.map(key)).toEqual((await here.readAll()).map(key));
  });

  it("deliver nothing of a failed append of a group, of an idempotent retry, or of a deleted stream", async () => {
    const log = sqlite();
    const all = follow(log, {});
    await log.append("a", [note("a1", { eventId: "0190a7c0-0000-7000-8000-000000000001" })]);
    const results = await Promise.allSettled([
      log.append("a", [note("stale")], { expectedVersion: 0 }),
      log.append("b", [note("b1")]),
      log.append("a", [note("a1", { eventId: "0190a7c0-0000-7000-8000-000000000001" })], { expectedVersion: 0 }),
    ]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    await Promise.all([log.deleteStream("b"), log.append("c", [note("c1")])]);
    await log.append("c", [note("c2")]);
    const expected = await log.readAll();
    await all.until(4);
    expect(all.events.map((event) => (event.data as { text: string }).text)).toEqual(["a1", "b1", "c1", "c2"]);
    expect(expected.map((event) => (event.data as { text: string }).text)).toEqual(["a1", "c1", "c2"]);
  });

  it.each([
    ["sqlite file", () => sqlite()],
    ["memory", () => createMemoryEventLog({ registry: testRegistry() })],
  ])("give each subscriber its own event objects (%s)", async (_name, factory) => {
    const log = factory();
    const first = follow(log, {});
    const second = follow(log, {});
    const mutate = log.subscribe({}).subscribe((event) => {
      (event.data as { text: string }).text = "changed";
      event.metadata.runId = "changed";
    });
    await log.append("a", [note("original", { metadata: { runId: "r1" } })]);
    await Promise.all([first.until(1), second.until(1)]);
    mutate.unsubscribe();
    for (const event of [...first.events, ...second.events, ...(await log.readAll())]) {
      expect(event.data).toEqual({ text: "original" });
      expect(event.metadata).toEqual({ runId: "r1" });
    }
  });
});

/**
 * A stream subscription that starts at (or jumps to) a global position resumes at the right
 * version of its stream: the SQLite log finds the stream's version at a position by a binary
 * search over the stream's versions (issue 17). Checked against a plain filter of the whole log,
 * from every position, with interleaved streams, a type filter, a stream deleted and created
 * again (its versions restart above old positions), and a stream longer than a subscription page.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { note, testRegistry } from "./event-log.contract.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-cursor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const open: EventLog[] = [];
afterEach(async () => {
  for (const log of open.splice(0)) await log.close();
});

const factories: [string, () => EventLog][] = [
  ["sqlite file", () => createSqliteEventLog({ path: join(dir, `log-${files++}.db`), registry: testRegistry(), synchronous: "OFF" })],
  ["memory", () => createMemoryEventLog({ registry: testRegistry() })],
];

/** The first page of a subscription, delivered synchronously inside `subscribe()` (the log contract). */
function firstPage(log: EventLog, options: Parameters<EventLog["subscribe"]>[0]): StoredEvent[] {
  const seen: StoredEvent[] = [];
  log.subscribe(options).subscribe((event) => seen.push(event)).unsubscribe();
  return seen;
}

describe.each(factories)("stream subscriptions from a position (%s)", (_name, factory) => {
  it("deliver exactly the stream's events after the position, from every position", async () => {
    const log = factory();
    open.push(log);
    const streams = ["a", "b", "c"];
    for (let index = 0; index < 90; index++) {
      const streamId = streams[(index * 7) % 3 === 0 ? 0 : index % 2 === 0 ? 1 : 2];
      const event = index % 4 === 0 ? { type: "note.removed", data: { n: index } } : note(`t${index}`);
      await log.append(streamId, [event]);
      if (index === 40) await log.deleteStream("b");
    }
    const all = await log.readAll();
    const head = await log.headPosition();
    for (const streamId of streams) {
      for (let position = 0; position <= head; position++) {
        const expected = all.filter((event) => event.streamId === streamId && event.globalPosition > position);
        expect(firstPage(log, { streamId, fromPosition: position }).map((event) => event.eventId)).toEqual(expected.map((event) => event.eventId));
        const typed = expected.filter((event) => event.type === "note.removed");
        expect(firstPage(log, { streamId, fromPosition: position, types: ["note.removed"] }).map((event) => event.eventId)).toEqual(
          typed.map((event) => event.eventId),
        );
      }
    }
  });

  it("page through a stream longer than a page, interleaved with another, without loss or repeat", async () => {
    const log = factory();
    open.push(log);
    for (let round = 0; round < 30; round++) {
      await log.append("long", Array.from({ length: 50 }, (_, index) => note(`l${round}-${index}`)));
      await log.append("other", [note(`o${round}`)]);
    }
    const all = await log.readAll();
    const from = all[700].globalPosition;
    const expected = all.filter((event) => event.streamId === "long" && event.globalPosition > from);
    const last = expected[expected.length - 1].version;
    const received = await firstValueFrom(
      log.subscribe({ streamId: "long", fromPosition: from }).pipe(
        takeWhile((event) => event.version < last, true),
        toArray(),
      ),
    );
    expect(received.map((event) => event.version)).toEqual(expected.map((event) => event.version));
  });
});

/**
 * `sessionAuditSource`: a session's stream and its elicitation stream, catch-up then live, in
 * log order, each event once, on the in-memory log, a SQLite file and PostgreSQL. Catch-up spans
 * more than one page of both streams; live, appends to both streams are issued in the same tick
 * (one commit group on SQLite and PostgreSQL), where two subscriptions merged as they arrive could
 * deliver a later event first. Another session's events stay out; closing the log completes it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstValueFrom, take, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import type { EventLog, NewEvent, StoredEvent } from "../../src/store/event-log.ts";
import { elicitationStreamId } from "../../src/store/events/elicitation-events.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { sessionAuditSource } from "../../src/store/session/session-audit.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, useTestSchemas } from "./pg-test-db.ts";

const schema = useTestSchemas("audit_src");
const logs: [string, () => EventLog][] = [
  ["in-memory", () => createMemoryEventLog()],
  ["SQLite file", () => createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-audit-source-")), "arbor.db") })],
  ["PostgreSQL", () => createPostgresEventLog({ connectionString: PG_URL, schema: schema(), poolSize: 2 })],
];

const moved = (): NewEvent => ({ type: "leaf.moved", data: { leafId: null, fromLeafId: null } });
const answered = (sessionId: string, index: number): NewEvent => ({
  type: "elicitation.answered",
  data: { elicitationId: `el_${index}`, sessionId, action: "decline", via: "api" },
});

/** The two streams' events as the log holds them, in global position order. */
async function logOrder(log: EventLog, sessionId: string): Promise<number[]> {
  const events = [...(await log.readStream(sessionStreamId(sessionId))), ...(await log.readStream(elicitationStreamId(sessionId)))];
  return events.map((event) => event.globalPosition).sort((a, b) => a - b);
}

const positions = (events: StoredEvent[]) => events.map((event) => event.globalPosition);

describe.each(logs)("sessionAuditSource on %s", (_name, open) => {
  it("catches up over several pages of both streams, then follows appends to both in one commit group, in log order", { timeout: 60_000 }, async () => {
    const log = open();
    try {
      // Catch-up: 700 + 700 events, interleaved in batches of 50, and another session's between them.
      for (let batch = 0; batch < 14; batch++) {
        await log.append(sessionStreamId("s1"), Array.from({ length: 50 }, moved));
        await log.append(elicitationStreamId("s1"), Array.from({ length: 50 }, (_, index) => answered("s1", batch * 50 + index)));
        await log.append(sessionStreamId("other"), [moved()]);
        await log.append(elicitationStreamId("other"), [answered("other", batch)]);
      }
      const live = 2 * 40;
      const total = 1400 + live;
      const seen = firstValueFrom(sessionAuditSource(log, "s1").pipe(take(total), toArray()));
      // Live: both streams in the same tick, one event each per append.
      await Promise.all(
        Array.from({ length: 40 }, (_, index) => [
          log.append(sessionStreamId("s1"), [moved()]),
          log.append(elicitationStreamId("s1"), [answered("s1", 1000 + index)]),
          log.append(sessionStreamId("other"), [moved()]),
        ]).flat(),
      );
      const events = await seen;
      expect(positions(events)).toEqual(await logOrder(log, "s1"));
      expect(events.every((event) => event.streamId.endsWith("-s1"))).toBe(true);
    } finally {
      await log.close();
    }
  });

  it("completes when the log closes", async () => {
    const log = open();
    await log.append(elicitationStreamId("s1"), [answered("s1", 1)]);
    const all = firstValueFrom(sessionAuditSource(log, "s1").pipe(toArray()));
    const first = await firstValueFrom(sessionAuditSource(log, "s1"));
    expect(first.type).toBe("elicitation.answered");
    await log.close();
    expect(positions(await all)).toEqual([first.globalPosition]);
  });
});

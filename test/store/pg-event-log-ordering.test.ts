/**
 * The PostgreSQL log's global order under concurrent transactions, proven with
 * two connections that force a slow older transaction and a fast newer one. The
 * naive BIGSERIAL reader kept here shows the failure the log avoids.
 */
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { createPostgresEventLog, type PostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { appendRowsQuery } from "../../src/store/postgres/pg-append-rows.ts";
import { spawnTsx } from "./child-process.ts";
import { collect, notes, testRegistry } from "./event-log.contract.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const newSchema = useTestSchemas("order");
let slow: pg.Client;
let watcher: pg.Client;
const logs: PostgresEventLog[] = [];
const openLog = (schema: string, pollIntervalMs?: number) => {
  const log = createPostgresEventLog({ connectionString: PG_URL, schema, registry: testRegistry(), poolSize: 2, pollIntervalMs });
  logs.push(log);
  return log;
};

beforeAll(async () => {
  slow = await testClient();
  watcher = await testClient();
});
afterAll(async () => {
  await slow.end();
  await watcher.end();
});
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
});

/** Resolves once some backend is waiting on a lock while running `fragment` (no sleep decides the order). */
async function untilWaitingOnLock(fragment: string): Promise<void> {
  for (;;) {
    const rows = await watcher.query(
      "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND state = 'active' AND query LIKE '%' || $1 || '%'",
      [fragment],
    );
    if (rows.rowCount) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A naive reader over a BIGSERIAL table: reads ids above its cursor, advancing it to the last id seen. */
function naiveReader(client: pg.Client, table: string) {
  let cursor = 0;
  const seen: number[] = [];
  return {
    seen,
    async poll(): Promise<void> {
      const rows = await client.query<{ id: string }>(`SELECT id FROM ${table} WHERE id > $1 ORDER BY id`, [cursor]);
      for (const row of rows.rows) {
        cursor = Number(row.id);
        seen.push(cursor);
      }
    },
  };
}

/** The append_rows call of one event, as the log sends it (`pg-append-rows.ts`). */
const appendRowsOf = (schema: string, stream: string, text: string) =>
  appendRowsQuery(schema, [["append"], [stream], ["any"], [null], [1], [null], [`${stream}-${text}`], [true], ["note.added"], [1], [null], [JSON.stringify({ text })], ["{}"], new Date().toISOString()]);

/** The append_batch call of one event, as a process of the build before migration 5 sends it. */
const batchOf = (stream: string, text: string) =>
  JSON.stringify([{ k: "append", s: stream, e: "any", n: 1, ev: [{ id: `${stream}-${text}`, c: true, t: "note.added", v: 1, d: { text }, m: {} }] }]);

describe("PostgreSQL log: global order without gaps", () => {
  it("a naive BIGSERIAL reader skips an event written by a slow transaction that began before a faster one", async () => {
    const schema = newSchema();
    await watcher.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".naive (id bigserial PRIMARY KEY, payload text)`);
    const table = `"${schema}".naive`;
    const reader = naiveReader(watcher, table);
    await slow.query("BEGIN");
    await slow.query(`INSERT INTO ${table} (payload) VALUES ('slow')`); // takes id 1, not committed
    const fast = await testClient();
    await fast.query(`INSERT INTO ${table} (payload) VALUES ('fast')`); // takes id 2, commits at once
    await fast.end();
    await reader.poll(); // sees 2, cursor moves past 1
    await slow.query("COMMIT");
    await reader.poll();
    const committed = await watcher.query(`SELECT id FROM ${table} ORDER BY id`);
    expect(committed.rows.map((row) => Number(row.id))).toEqual([1, 2]);
    expect(reader.seen).toEqual([2]); // event 1 is lost for this reader, forever
  });

  it("waits for the older transaction before exposing a newer commit, and never skips the slow one", async () => {
    const schema = newSchema();
    const log = openLog(schema);
    await log.headPosition(); // schema created
    const seen: number[] = [];
    const live = log.subscribe().subscribe((event) => seen.push(event.globalPosition));
    await slow.query("BEGIN");
    await slow.query(appendRowsOf(schema, "slow", "s"));
    const fast = log.append("fast", [{ type: "note.added", data: { text: "f" } }]);
    await untilWaitingOnLock(`"${schema}".append_rows`);
    // The newer append waits for the older transaction: nothing is visible yet.
    expect(await log.readAll()).toEqual([]);
    expect(await log.headPosition()).toBe(0);
    await slow.query("COMMIT");
    const result = await fast;
    expect(result.events[0].globalPosition).toBe(2);
    const all = await log.readAll();
    expect(all.map((event) => [event.streamId, event.globalPosition])).toEqual([["slow", 1], ["fast", 2]]);
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual([1, 2]);
    live.unsubscribe();
  });

  it("a rolled-back older append leaves no gap: the waiting newer append takes its position (the older one by the previous build's append_batch)", async () => {
    const schema = newSchema();
    const log = openLog(schema);
    await log.append("first", notes(1));
    await slow.query("BEGIN");
    await slow.query(`SELECT "${schema}".append_batch($1::json, $2)`, [batchOf("slow", "s"), new Date().toISOString()]);
    const fast = log.append("fast", notes(1));
    await untilWaitingOnLock(`"${schema}".append_rows`);
    await slow.query("ROLLBACK");
    expect((await fast).events[0].globalPosition).toBe(2);
    expect((await log.readAll()).map((event) => [event.streamId, event.globalPosition])).toEqual([["first", 1], ["fast", 2]]);
  });
});

describe("PostgreSQL log: subscriptions across processes", () => {
  it("delivers another process's concurrent appends live, in order, without gap or duplicate", async () => {
    const schema = newSchema();
    const log = openLog(schema);
    await log.append("local", notes(5, "pre"));
    const perChild = 40;
    const total = 5 + 2 * perChild + 20;
    const received = collect(log.subscribe(), total);
    const children = [0, 1].map((index) => spawnTsx("test/store/fixtures-pg/pg-child.ts", [PG_URL, schema, "append", `child${index}`, String(perChild)]));
    for (let index = 0; index < 20; index++) await log.append("local", notes(1, `live${index}`));
    for (const child of children) expect(await child.nextLine()).toMatch(/^done \d+$/);
    const events: StoredEvent[] = await received;
    expect(events.map((event) => event.globalPosition)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    expect(new Set(events.map((event) => event.eventId)).size).toBe(total);
    expect(events).toEqual(await log.readAll());
    for (const child of children) await child.exited;
  }, 60_000);

  it("falls back to polling when the LISTEN connection is lost", async () => {
    const schema = newSchema();
    const log = openLog(schema, 50);
    const other = openLog(schema);
    const received = collect(log.subscribe(), 3);
    await other.append("a", notes(1));
    // Kill the listening backend, then append from another log: only the poll can notice.
    for (;;) {
      const killed = await watcher.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND pid <> pg_backend_pid()",
        [`LISTEN "arbor_events_${schema}"`],
      );
      if (killed.rowCount) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await other.append("a", notes(2));
    expect((await received).map((event) => event.globalPosition)).toEqual([1, 2, 3]);
  });
});

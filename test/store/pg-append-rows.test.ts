/**
 * The PostgreSQL log's `append_rows` (migration 5): its arrays in binary form read back as the server sees them, text the JSON escapes and UTF-8
 * lengths could get wrong stored byte for byte, and the writes of one flush that read what an earlier write of the same flush wrote (a retry of
 * its eventIds, an empty append after it, a delete of the stream it appended to).
 */
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventIdReusedError } from "../../src/core/errors.ts";
import { boolArray, int4Array, int8Array, textArray } from "../../src/store/postgres/pg-binary-arrays.ts";
import { createPostgresEventLog, type PostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { note, notes, testRegistry } from "./event-log.contract.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const newSchema = useTestSchemas("rows");
let client: pg.Client;
const logs: PostgresEventLog[] = [];
beforeAll(async () => {
  client = await testClient();
});
afterAll(async () => {
  for (const log of logs) await log.close();
  await client.end();
});
const open = (): PostgresEventLog => {
  const log = createPostgresEventLog({ connectionString: PG_URL, schema: newSchema(), registry: testRegistry(), poolSize: 2 });
  logs.push(log);
  return log;
};

describe("append_rows arrays in binary form", () => {
  it("reach the server as the arrays they encode: empty, with NULLs, multi-byte text, json, 64-bit integers and booleans", async () => {
    const texts = ["", "plain", 'quote " and backslash \\', "naïve ☃ 😀", null, "{}"];
    const json = ['{"a":"😀\\u0000\\"","b":[1,2.5,null]}', null, "[]"];
    const row = (
      await client.query(`SELECT $1::text[] AS texts, $2::json[]::text[] AS json, $3::integer[] AS int4, $4::bigint[]::text[] AS int8, $5::boolean[] AS bools,
        $6::text[] AS empty, cardinality($6::text[]) AS n`, [
        textArray(texts),
        textArray(json, true),
        int4Array([0, -1, 2147483647]),
        int8Array([null, 9007199254740991, 1]),
        boolArray([true, false]),
        textArray([]),
      ])
    ).rows[0];
    expect(row).toEqual({ texts, json, int4: [0, -1, 2147483647], int8: [null, "9007199254740991", "1"], bools: [true, false], empty: [], n: 0 });
  });

  it("refuses a json element that is not JSON", async () => {
    await expect(client.query("SELECT $1::json[]", [textArray(["{", "{}"], true)])).rejects.toThrow(/invalid input syntax for type json/);
  });
});

describe("append_rows", () => {
  it("stores data and metadata text byte for byte, with caller times and the commit time in one flush", async () => {
    const log = open();
    const text = 'multi-byte ☃ 😀, a quote ", a backslash \\, a NUL \u0000, a line\nbreak';
    const [first, second] = await Promise.all([
      log.append("a", [note(text, { metadata: { runId: "r ☃" }, time: "2026-01-02T03:04:05.000Z" }), note("plain")]),
      log.append("b", [note(text)]),
    ]);
    const stored = (await client.query(`SELECT stream_id, version, time, data::text AS data, metadata::text AS metadata FROM "${log.schema}".events ORDER BY global_position`)).rows;
    expect(stored.map((row) => [row.stream_id, row.version, row.data, row.metadata])).toEqual([
      ["a", "1", JSON.stringify({ text }), JSON.stringify({ runId: "r ☃" })],
      ["a", "2", JSON.stringify({ text: "plain" }), "{}"],
      ["b", "1", JSON.stringify({ text }), "{}"],
    ]);
    expect(stored[0].time).toBe("2026-01-02T03:04:05.000Z");
    expect(stored[1].time).toBe(first.events[1].time);
    expect(second.events[0].time).toBe(first.events[1].time);
    expect((await log.readStream("a")).map((event) => event.data)).toEqual([{ text }, { text: "plain" }]);
  });

  it("lets a write see what an earlier write of the same flush wrote: a retry of its eventIds, an empty append, a delete", async () => {
    const log = open();
    await log.append("gone", notes(2));
    const [appended, retried, empty, mixed, deleted, recreated] = await Promise.allSettled([
      log.append("a", [note("x", { eventId: "e1" }), note("y", { eventId: "e2" })], { expectedVersion: "no_stream" }),
      log.append("a", [note("x", { eventId: "e1" }), note("y", { eventId: "e2" })], { expectedVersion: "no_stream" }),
      log.append("a", []),
      log.append("a", [note("new", { eventId: "e3" }), note("x", { eventId: "e1" })]),
      log.deleteStream("gone"),
      log.append("gone", [note("again")], { expectedVersion: "no_stream" }),
    ]);
    expect(appended).toMatchObject({ status: "fulfilled", value: { duplicate: false, nextExpectedVersion: 2, lastGlobalPosition: 4 } });
    expect(retried).toMatchObject({ status: "fulfilled", value: { duplicate: true, nextExpectedVersion: 2, lastGlobalPosition: 4 } });
    expect(empty).toMatchObject({ status: "fulfilled", value: { events: [], nextExpectedVersion: 2, lastGlobalPosition: 4 } });
    expect(mixed.status).toBe("rejected");
    expect((mixed as PromiseRejectedResult).reason).toBeInstanceOf(EventIdReusedError);
    expect(deleted).toMatchObject({ status: "fulfilled", value: 2 });
    expect(recreated).toMatchObject({ status: "fulfilled", value: { nextExpectedVersion: 1, lastGlobalPosition: 5 } });
    expect((await log.readAll()).map((event) => `${event.streamId}${event.version}@${event.globalPosition}`)).toEqual(["a1@3", "a2@4", "gone1@5"]);
  });
});

/**
 * The PostgreSQL log's tenant column (migration 2, as Emmett's partitions): an upgrade of a
 * version-1 schema backfills every stream's and event's tenant and loses nothing; new appends
 * get the tenant of their session; `listStreams`, `readAll` and `subscribe` filter by it through
 * an index; a tenant-scoped repository lists through it. SQLite refuses the filter by name.
 */
import type pg from "pg";
import { firstValueFrom, take, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { migratePostgresLog, POSTGRES_LOG_MIGRATIONS } from "../../src/store/postgres/pg-schema.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const newSchema = useTestSchemas("tenantcol");
let client: pg.Client;
beforeAll(async () => {
  client = await testClient();
});
afterAll(async () => {
  await client.end();
});

const rowsOf = async (schema: string, table: "streams" | "events") =>
  (await client.query(`SELECT stream_id, tenant FROM "${schema}".${table} ORDER BY ${table === "streams" ? "first_position" : "global_position"}`)).rows as { stream_id: string; tenant: string }[];

describe("the PostgreSQL tenant column", () => {
  it("upgrades a version-1 log: every row gets its session's tenant, nothing is lost, and new appends are tagged", async () => {
    const schema = newSchema();
    // A version-1 schema holding two tenants' sessions, a legacy session, a tombstone and a non-session stream.
    await migratePostgresLog(client, schema, POSTGRES_LOG_MIGRATIONS.slice(0, 1));
    const insert = async (position: number, stream: string, version: number, type: string, data: unknown) => {
      await client.query(
        `INSERT INTO "${schema}".events (global_position, event_id, stream_id, version, type, schema_version, time, data, metadata) VALUES ($1, $2, $3, $4, $5, 1, '2026-01-01T00:00:00.000Z', $6, '{}')`,
        [position, `e${position}`, stream, version, type, JSON.stringify(data)],
      );
      await client.query(
        `INSERT INTO "${schema}".streams (stream_id, version, first_position, created_at, updated_at) VALUES ($1, $2, $3, 'x', 'x') ON CONFLICT (stream_id) DO UPDATE SET version = EXCLUDED.version`,
        [stream, version, position],
      );
      await client.query(`UPDATE "${schema}".log_head SET position = $1`, [position]);
    };
    await insert(1, "session-a1", 1, "session.created", { sessionId: "a1", cwd: "/", createdAt: "2026-01-01T00:00:00.000Z", tenant: "a" });
    await insert(2, "session-a1", 2, "leaf.moved", { leafId: null, fromLeafId: null });
    await insert(3, "session-b1", 1, "session.created", { sessionId: "b1", cwd: "/", createdAt: "2026-01-01T00:00:00.000Z", tenant: "b" });
    await insert(4, "session-legacy", 1, "session.created", { sessionId: "legacy", cwd: "/", createdAt: "2026-01-01T00:00:00.000Z" });
    await insert(5, "tombstone-a2", 1, "session.deleted", { sessionId: "a2", tenant: "a" });
    await insert(6, "other", 1, "leaf.moved", { leafId: null, fromLeafId: null });
    const before = (await client.query(`SELECT global_position, event_id, stream_id, version, type, data::text FROM "${schema}".events ORDER BY global_position`)).rows;

    const log = await openPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    try {
      expect((await client.query(`SELECT max(version) AS v FROM "${schema}".arbor_migrations`)).rows[0].v).toBe(POSTGRES_LOG_MIGRATIONS[POSTGRES_LOG_MIGRATIONS.length - 1].version);
      expect(await rowsOf(schema, "streams")).toEqual([
        { stream_id: "session-a1", tenant: "a" },
        { stream_id: "session-b1", tenant: "b" },
        { stream_id: "session-legacy", tenant: "default" },
        { stream_id: "tombstone-a2", tenant: "a" },
        { stream_id: "other", tenant: "default" },
      ]);
      expect((await rowsOf(schema, "events")).map((row) => row.tenant)).toEqual(["a", "a", "b", "default", "a", "default"]);
      // Nothing lost or changed by the upgrade.
      expect((await client.query(`SELECT global_position, event_id, stream_id, version, type, data::text FROM "${schema}".events ORDER BY global_position`)).rows).toEqual(before);
      const indexes = (await client.query("SELECT indexname FROM pg_indexes WHERE schemaname = $1", [schema])).rows.map((row) => row.indexname as string);
      expect(indexes).toEqual(expect.arrayContaining(["streams_tenant", "events_tenant_position"]));

      // New sessions and their later events carry their tenant; the repository lists through the index.
      const repoA = createSessionRepository({ log, tenant: "a" });
      const created = await repoA.create({ id: "a3", cwd: "/" });
      await created.appendEntry({ type: "custom", customType: "note", data: { text: "a's" } });
      await createSessionRepository({ log, tenant: "b" }).delete("b1");
      const streams = await rowsOf(schema, "streams");
      expect(streams.find((row) => row.stream_id === "session-a3")?.tenant).toBe("a");
      expect(streams.find((row) => row.stream_id === "tombstone-b1")?.tenant).toBe("b");
      expect((await client.query(`SELECT DISTINCT tenant FROM "${schema}".events WHERE stream_id = 'session-a3'`)).rows).toEqual([{ tenant: "a" }]);
      expect((await log.listStreams({ tenant: "a" })).map((row) => row.streamId)).toEqual(["session-a1", "tombstone-a2", "session-a3"]);
      expect((await log.listStreams({ tenant: "b" })).map((row) => row.streamId)).toEqual(["tombstone-b1"]);
      expect((await repoA.list()).map((row) => row.id).sort()).toEqual(["a1", "a3"]);
      expect((await createSessionRepository({ log, tenant: "default" }).list()).map((row) => row.id)).toEqual(["legacy"]);

      // readAll and subscribe see one tenant's events only.
      const readA = await log.readAll({ tenant: "a" });
      expect(new Set(readA.map((event) => event.streamId))).toEqual(new Set(["session-a1", "tombstone-a2", "session-a3"]));
      expect(readA.length).toBe((await log.readAll()).filter((event) => ["session-a1", "tombstone-a2", "session-a3"].includes(event.streamId)).length);
      const live = firstValueFrom(log.subscribe({ tenant: "b", fromPosition: await log.headPosition() }).pipe(take(1), toArray()));
      await repoA.create({ id: "a4", cwd: "/" }); // tenant a: not delivered
      await createSessionRepository({ log, tenant: "b" }).create({ id: "b2", cwd: "/" });
      expect((await live).map((event) => [event.streamId, event.type])).toEqual([["session-b2", "session.created"]]);
      const caughtUp = await firstValueFrom(log.subscribe({ tenant: "b" }).pipe(take(2), toArray()));
      expect(caughtUp.map((event) => event.streamId)).toEqual(["tombstone-b1", "session-b2"]);
    } finally {
      await log.close();
    }
  });

  it("is refused by name on a log without a tenant index", async () => {
    const log = createSqliteEventLog({ path: ":memory:" });
    try {
      expect(log.tenantIndex).toBeUndefined();
      await expect(log.readAll({ tenant: "a" })).rejects.toThrow(/readAll: this log has no tenant index/);
      await expect(log.listStreams({ tenant: "a" })).rejects.toThrow(/listStreams: this log has no tenant index/);
      expect(() => log.subscribe({ tenant: "a" })).toThrow(/subscribe: this log has no tenant index/);
    } finally {
      await log.close();
    }
  });
});

/** The PostgreSQL log's versioned schema: created on open, upgraded, newer and foreign schemas refused untouched. */
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogSchemaError } from "../../src/core/errors.ts";
import { createPostgresEventLog, openPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { migratePostgresLog, POSTGRES_LOG_MIGRATIONS, type PostgresMigration } from "../../src/store/postgres/pg-schema.ts";
import { notes, testRegistry } from "./event-log.contract.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const newSchema = useTestSchemas("schema");
let client: pg.Client;
beforeAll(async () => {
  client = await testClient();
});
afterAll(async () => {
  await client.end();
});

const versions = async (schema: string) =>
  (await client.query(`SELECT version, name FROM "${schema}".arbor_migrations ORDER BY version`)).rows.map((row) => row.version as number);
const tableList = async (schema: string) =>
  (await client.query("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [schema])).rows.map((row) => row.tablename as string);
const open = (schema: string) => openPostgresEventLog({ connectionString: PG_URL, schema, registry: testRegistry(), poolSize: 1 });

describe("PostgreSQL log schema", () => {
  it("creates the schema at the current version once, even when several logs open a new database at once", async () => {
    const schema = newSchema();
    const logs = await Promise.all([open(schema), open(schema), open(schema)]);
    expect(await versions(schema)).toEqual(POSTGRES_LOG_MIGRATIONS.map((migration) => migration.version));
    expect(await tableList(schema)).toEqual(["arbor_migrations", "events", "log_head", "session_summaries", "stream_owners", "streams"]);
    await logs[0].append("a", notes(2));
    expect(await logs[2].readAll()).toHaveLength(2);
    for (const log of logs) await log.close();
  });

  it("refuses a schema of a newer version with LogSchemaError and changes nothing", async () => {
    const schema = newSchema();
    const log = await open(schema);
    await log.append("a", notes(3));
    await log.close();
    await client.query(`INSERT INTO "${schema}".arbor_migrations (version, name) VALUES (99, 'from the future')`);
    const error = await open(schema).catch((caught: unknown) => caught);
    expect(LogSchemaError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/schema version 99, newer than this build knows \(5\)/);
    // The lazily opened form rejects every call the same way.
    const lazy = createPostgresEventLog({ connectionString: PG_URL, schema, registry: testRegistry(), poolSize: 1 });
    await expect(lazy.append("a", notes(1))).rejects.toThrow(LogSchemaError);
    await lazy.close();
    expect(await versions(schema)).toEqual([1, 2, 3, 4, 5, 99]);
    expect((await client.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0].n).toBe(3);
  });

  it("refuses a schema holding another application's tables", async () => {
    const schema = newSchema();
    await client.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".events (id int)`);
    await expect(open(schema)).rejects.toThrow(/is not an Arbor event log/);
    expect(await tableList(schema)).toEqual(["events"]);
  });

  it("upgrades an older schema in one transaction: a failing migration leaves it at its version, a working one upgrades it", async () => {
    const schema = newSchema();
    const log = await open(schema);
    await log.append("a", notes(1));
    await log.close();
    const failing: PostgresMigration = { version: 6, name: "broken", sql: (s) => `ALTER TABLE ${s}.events ADD COLUMN extra text; SELECT 1/0;` };
    await expect(migratePostgresLog(client, schema, [...POSTGRES_LOG_MIGRATIONS, failing])).rejects.toThrow(/division by zero/);
    expect(await versions(schema)).toEqual([1, 2, 3, 4, 5]);
    const working: PostgresMigration = { version: 6, name: "extra column", sql: (s) => `ALTER TABLE ${s}.events ADD COLUMN extra text` };
    expect(await migratePostgresLog(client, schema, [...POSTGRES_LOG_MIGRATIONS, working])).toBe(6);
    expect(await versions(schema)).toEqual([1, 2, 3, 4, 5, 6]);
    // Nothing was dropped by the upgrade; this build (version 5) now refuses the upgraded schema.
    expect((await client.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0].n).toBe(1);
    await expect(open(schema)).rejects.toThrow(LogSchemaError);
  });

  it("rejects a bad schema name and a missing connection with InvalidArgumentError", async () => {
    expect(() => createPostgresEventLog({ connectionString: PG_URL, schema: "bad-name; drop" })).toThrow(/schema must be/);
    expect(() => createPostgresEventLog({})).toThrow(/exactly one of connectionString and pool/);
    await expect(openPostgresEventLog({ connectionString: "postgres://postgres@127.0.0.1:1/test", schema: newSchema() })).rejects.toThrow(
      /Could not connect to PostgreSQL at postgres:\/\/postgres@127.0.0.1:1\/test/,
    );
  });
});

/**
 * Read-only CLI commands on PostgreSQL (`arbor --db postgres://… sessions`, `tree`, `events`) never
 * create or migrate a schema: with a mistyped ARBOR_DB_SCHEMA the real CLI process exits non-zero
 * with an error naming the schema, and the schema still does not exist afterwards.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { runArbor } from "./cli-helpers.ts";

const newSchema = useTestSchemas("ro");

async function schemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rows.length > 0;
  } finally {
    await client.end();
  }
}

describe("read-only commands on PostgreSQL", () => {
  it("refuse a missing schema by name and create nothing", async () => {
    const schema = newSchema();
    for (const command of [["sessions"], ["sessions", "--json"], ["events", "latest"]]) {
      const result = await runArbor(["--db", PG_URL, ...command], { env: { ARBOR_DB_SCHEMA: schema } });
      expect(result.code, `${command.join(" ")}: ${result.stdout}`).not.toBe(0);
      expect(result.stderr).toContain(`schema "${schema}" does not exist`);
      expect(await schemaExists(schema)).toBe(false);
    }
  }, 60_000);
});

/**
 * PostgreSQL for tests: the machine's server (127.0.0.1:5432, trust auth) and one
 * random schema per log, dropped after the file's tests so files run in parallel.
 * `ARBOR_TEST_PG` overrides the connection string.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll } from "vitest";

/** The test database's connection string. */
export const PG_URL = process.env.ARBOR_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

/** A fresh schema name, dropped by {@link dropTestSchemas} (registered with `afterAll` by {@link useTestSchemas}). */
export function testSchemaName(prefix = "t"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** Returns a schema-name factory whose schemas are dropped after the file's tests. */
export function useTestSchemas(prefix = "t"): () => string {
  const created: string[] = [];
  afterAll(async () => {
    if (created.length > 0) await dropTestSchemas(created);
  });
  return () => {
    const name = testSchemaName(prefix);
    created.push(name);
    return name;
  };
}

/** Drops the schemas (and everything in them). */
export async function dropTestSchemas(names: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const name of names) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A plain client of the test database (the caller ends it). */
export async function testClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  return client;
}

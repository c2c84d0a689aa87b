/**
 * An event row whose `schema_version` is newer than the code's catalogue (written by a newer
 * Arbor) is refused on read with `LogSchemaError` naming the stream, version, type and versions,
 * on a real SQLite file and on real PostgreSQL, instead of being read as the older shape.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { LogSchemaError } from "../../src/core/errors.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, useTestSchemas } from "./pg-test-db.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-newer-version-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nextSchema = useTestSchemas("newer");

const leafMoved = { type: "leaf.moved", data: { leafId: null, fromLeafId: null } };

async function expectRefused(read: () => Promise<unknown>): Promise<void> {
  const error = await read().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(LogSchemaError.isInstance(error)).toBe(true);
  expect((error as Error).message).toMatch(/stream "s-1" version 2 .*"leaf\.moved" schema version 7, newer than this arbor-agent knows \(1\)/);
}

describe("a stored event newer than the catalogue", () => {
  it("is refused on read from a SQLite file, naming where it is", async () => {
    const path = join(dir, "events.db");
    const log = createSqliteEventLog({ path });
    await log.append("s-1", [leafMoved, leafMoved]);
    await log.close();
    const db = new Database(path);
    db.prepare("UPDATE events SET schema_version = 7 WHERE stream_id = 's-1' AND version = 2").run();
    db.close();
    const reopened = createSqliteEventLog({ path });
    try {
      await expectRefused(() => reopened.readStream("s-1"));
      await expectRefused(() => reopened.readAll());
      // The older row alone still reads.
      expect((await reopened.readStream("s-1", { limit: 1 })).map((event) => event.version)).toEqual([1]);
    } finally {
      await reopened.close();
    }
  });

  it("is refused on read from PostgreSQL, naming where it is", async () => {
    const schema = nextSchema();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema });
    try {
      await log.append("s-1", [leafMoved, leafMoved]);
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`UPDATE "${schema}".events SET schema_version = 7 WHERE stream_id = 's-1' AND version = 2`);
      await client.end();
      await expectRefused(() => log.readStream("s-1"));
    } finally {
      await log.close();
    }
  });
});

/**
 * `arbor keys rotate` on a log with nothing to rotate: a log that is not encrypted (no key store) is refused with exit 2 and says so, with or
 * without ARBOR_ENCRYPTION_KEY, and writes no key store; a log whose key store was moved away while it holds sealed data is refused naming the
 * lost key store. The real CLI in a child process, real SQLite files and the real PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFileBeside } from "../../src/store/crypto/sqlite-data-keys.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

describe("arbor keys rotate with nothing to rotate", { timeout: 60_000 }, () => {
  let dir: string;
  const newSchema = useTestSchemas("keys");
  beforeAll(() => {
    dir = tempDir("arbor-keys-");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("SQLite: an unencrypted log is refused (exit 2, 'not encrypted'), with the key and without it, and no key file is created", async () => {
    const db = join(dir, "plain.db");
    const log = createSqliteEventLog({ path: db });
    await createSessionRepository({ log }).create({ id: "plain-1", cwd: dir });
    await log.close();
    for (const key of [randomBytes(32).toString("base64"), ""]) {
      const rotate = await runArbor(["--db", db, "keys", "rotate"], { env: { ARBOR_ENCRYPTION_KEY: key } });
      expect(rotate.code, rotate.stderr).toBe(2);
      expect(rotate.stdout).toBe("");
      expect(rotate.stderr).toContain("the log is not encrypted");
      expect(rotate.stderr).toContain(keyFileBeside(db));
      expect(existsSync(keyFileBeside(db))).toBe(false);
    }
  });

  it("SQLite: a log holding sealed data whose key file was moved away is refused naming the lost key store, and no new key file is created", async () => {
    const db = join(dir, "lost.db");
    const key = randomBytes(32).toString("base64");
    const log = createSqliteEventLog({ path: db, encryption: { key } });
    await createSessionRepository({ log }).create({ id: "sealed-1", cwd: dir });
    await log.close();
    renameSync(keyFileBeside(db), join(dir, "moved.keys.db"));
    const rotate = await runArbor(["--db", db, "keys", "rotate"], { env: { ARBOR_ENCRYPTION_KEY: key } });
    expect(rotate.code).not.toBe(0);
    expect(rotate.stdout).toBe("");
    expect(rotate.stderr).toContain("does not exist, but the log holds sealed data");
    expect(existsSync(keyFileBeside(db))).toBe(false);
  });

  it("PostgreSQL: an unencrypted log is refused (exit 2, 'not encrypted'), with the key and without it, and no key table is created", async () => {
    const schema = newSchema();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 1 });
    await createSessionRepository({ log }).create({ id: "plain-pg-1", cwd: dir });
    await log.close();
    for (const key of [randomBytes(32).toString("hex"), ""]) {
      const rotate = await runArbor(["--db", PG_URL, "keys", "rotate"], { env: { ARBOR_ENCRYPTION_KEY: key, ARBOR_DB_SCHEMA: schema } });
      expect(rotate.code, rotate.stderr).toBe(2);
      expect(rotate.stdout).toBe("");
      expect(rotate.stderr).toContain("the log is not encrypted");
      expect(rotate.stderr).toContain(`"${schema}_keys".data_keys`);
    }
    const client = await testClient();
    try {
      expect((await client.query("SELECT to_regclass($1) AS found", [`"${schema}_keys".data_keys`])).rows[0].found).toBeNull();
    } finally {
      await client.end();
    }
  });
});

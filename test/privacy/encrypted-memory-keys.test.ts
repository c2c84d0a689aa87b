/**
 * Memory key names on an encrypted log: a marker in a session memory key's name is in no byte of
 * the SQLite file (nor its WAL) and in no row of a pg_dump of the PostgreSQL log's schema, while
 * read, list (with a prefix, in key order), search and delete still work, also after reopening.
 * A real harness's `memory`, real SQLite files, the real PostgreSQL and pg_dump.
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/index.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const execFileAsync = promisify(execFile);
const newSchema = useTestSchemas("memkey");

const fileBytes = (path: string) =>
  ["", "-wal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

describe("memory key names on an encrypted log", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  const key = randomBytes(32);
  beforeAll(async () => {
    dir = tempDir("arbor-memkey-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes three keys (two holding `marker` in their names), deletes one; checks read, list, search; returns the session id. */
  async function useMemory(open: () => EventLog, marker: string): Promise<string> {
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const log = open();
    const harness = await createHarness({ eventLog: log, models: { main: model }, cwd: dir, memory: {} });
    const memory = harness.memory!;
    await memory.write(`plan.${marker}.b`, { step: "second step" });
    await memory.write(`plan.${marker}.a`, { step: "first step" });
    await memory.write(`gone.${marker}`, "to delete");
    await memory.write("other", "unrelated words");
    expect(await memory.delete(`gone.${marker}`)).toBe(true);
    expect(await memory.delete(`gone.${marker}`)).toBe(false);
    expect(await memory.read(`plan.${marker}.a`)).toEqual({ step: "first step" });
    expect((await memory.list({ prefix: "plan." })).map((row) => row.key)).toEqual([`plan.${marker}.a`, `plan.${marker}.b`]);
    expect((await memory.list()).map((row) => row.key)).toEqual(["other", `plan.${marker}.a`, `plan.${marker}.b`]);
    expect((await memory.search(marker.toLowerCase().slice(0, 10))).map((row) => row.key).sort()).toEqual([`plan.${marker}.a`, `plan.${marker}.b`]);
    expect((await memory.search("second")).map((row) => row.key)).toEqual([`plan.${marker}.b`]);
    const id = harness.id;
    await harness.close();
    await log.close();
    // Reopened: the projection reads back the same keys.
    const reopenedLog = open();
    const reopened = await createHarness({ eventLog: reopenedLog, models: { main: model }, cwd: dir, memory: {}, sessionId: id });
    expect((await reopened.memory!.list({ prefix: `plan.${marker}` })).map((row) => row.key)).toEqual([`plan.${marker}.a`, `plan.${marker}.b`]);
    expect(await reopened.memory!.read(`gone.${marker}`)).toBeUndefined();
    await reopened.close();
    await reopenedLog.close();
    return id;
  }

  it("SQLite: the key names are in no byte of the file or its WAL", async () => {
    const path = join(dir, "memkey.db");
    const marker = `KEYMARK${randomBytes(5).toString("hex")}`;
    await useMemory(() => createSqliteEventLog({ path, encryption: { key } }), marker);
    expect(fileBytes(path)).not.toContain(marker);
  });

  it("PostgreSQL: the key names are in no row of a dump of the log's schema", async () => {
    const schema = newSchema();
    const marker = `KEYMARK${randomBytes(5).toString("hex")}`;
    const client = await testClient();
    try {
      await useMemory(() => createPostgresEventLog({ connectionString: PG_URL, schema, encryption: { key } }), marker);
      const dump = join(dir, `${schema}.sql`);
      await execFileAsync("pg_dump", ["--dbname", PG_URL, "--schema", schema, "--file", dump]);
      const text = readFileSync(dump, "utf8");
      expect(text).toContain("memory");
      expect(text).not.toContain(marker);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_keys" CASCADE`);
      await client.end();
    }
  });
});

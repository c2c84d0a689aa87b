/**
 * `ARBOR_ENCRYPTION_KEY` on a log that holds nothing sealed yet (a clear log, no key store): reads
 * read it, a run that cannot start writes nothing (no key file, no key table), and the key store
 * is created by the first sealed write, which binds the log to that key. A log whose key file
 * holds no data key (every sealed session deleted) is still refused without the key, saying so.
 * The real CLI process, real SQLite files, the real PostgreSQL, a loopback model server.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const newSchema = useTestSchemas("clearenc");
const keySchemas: string[] = [];
const CLEAR_TEXT = "CLEAR-SESSION-TEXT-5d1e";

/** One clear session, written without encryption. */
async function clearSession(log: EventLog): Promise<string> {
  const session = await createSessionRepository({ log }).create({ id: "clear-1", cwd: "/tmp" });
  await session.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: CLEAR_TEXT }], timestamp: 1_000 } });
  await log.close();
  return session.id;
}

const ids = (result: { stdout: string }) => (JSON.parse(result.stdout) as Array<{ id: string }>).map((row) => row.id).sort();
const key = () => randomBytes(32).toString("base64");

describe("ARBOR_ENCRYPTION_KEY on a log with nothing sealed yet", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("arbor-clear-enc-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    const client = await testClient();
    for (const name of keySchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await client.end();
  });

  it("SQLite: sessions, tree and export read the clear log and create no key file", async () => {
    const db = join(dir, "reads.db");
    const keys = join(dir, "reads.keys.db");
    const id = await clearSession(createSqliteEventLog({ path: db }));
    const env = { ARBOR_ENCRYPTION_KEY: key() };
    const listed = await runArbor(["--db", db, "sessions", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(ids(listed)).toEqual([id]);
    const tree = await runArbor(["--db", db, "tree", id], { env });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toContain(CLEAR_TEXT);
    const exported = await runArbor(["--db", db, "export", id], { env });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain(CLEAR_TEXT);
    expect(existsSync(keys)).toBe(false);
  });

  it("SQLite: a run refused for its API key creates no key file, and leaves the log readable without a key or with another one", async () => {
    const db = join(dir, "refused.db");
    const keys = join(dir, "refused.keys.db");
    const id = await clearSession(createSqliteEventLog({ path: db }));
    const env = { ARBOR_ENCRYPTION_KEY: key() };
    const refused = await runArbor(["--db", db, "run", "--model", "openai:demo", "--cwd", dir, "enc run"], { env: { ...env, OPENAI_API_KEY: "" } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("no session was created");
    expect(existsSync(keys)).toBe(false);
    // Nothing binds the log to that key: without a key, and with another one, it reads as before.
    for (const other of [{ ARBOR_ENCRYPTION_KEY: "" }, { ARBOR_ENCRYPTION_KEY: key() }]) {
      const after = await runArbor(["--db", db, "sessions", "--json"], { env: other });
      expect(after.code, after.stderr).toBe(0);
      expect(ids(after)).toEqual([id]);
    }
    expect(existsSync(keys)).toBe(false);
  });

  it("a new session's run that cannot start (no API key, a bad --model, no prompt) writes nothing: no folder, no log file, no key file", async () => {
    const folder = join(dir, "fresh");
    const db = join(folder, "arbor.db");
    for (const encryption of [{ ARBOR_ENCRYPTION_KEY: key() }, { ARBOR_ENCRYPTION_KEY: "" }]) {
      const noKey = await runArbor(["--db", db, "run", "--model", "openai:demo", "--cwd", dir, "enc run"], { env: { ...encryption, OPENAI_API_KEY: "" } });
      expect(noKey.code).toBe(2);
      expect(noKey.stderr).toContain("no session was created");
      const badModel = await runArbor(["--db", db, "run", "--model", "nope:demo", "--cwd", dir, "enc run"], { env: { ...encryption, OPENAI_API_KEY: "test-key" } });
      expect(badModel.code).toBe(2);
      expect(badModel.stderr).toContain('Unknown provider "nope"');
      const noPrompt = await runArbor(["--db", db, "run", "--model", "openai:demo", "--cwd", dir], { env: { ...encryption, OPENAI_API_KEY: "test-key" } });
      expect(noPrompt.code).toBe(2);
      expect(noPrompt.stderr).toContain("No prompt");
      expect(existsSync(folder)).toBe(false);
    }
  });

  it("SQLite: the first sealed write creates the key file; then the old clear session and the sealed one read with that key, and without it the log is refused", async () => {
    const db = join(dir, "first-write.db");
    const keys = join(dir, "first-write.keys.db");
    const clear = await clearSession(createSqliteEventLog({ path: db }));
    const env = { ARBOR_ENCRYPTION_KEY: key(), OPENAI_API_KEY: "test-key" };
    const marker = `SEALED-${randomBytes(4).toString("hex")}`;
    server.script(textResponse("sealed reply"));
    const run = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, marker], { env });
    expect(run.code, run.stderr).toBe(0);
    const sealed = /session (\S+)/.exec(run.stderr)![1];
    expect(existsSync(keys)).toBe(true);
    for (const file of [db, `${db}-wal`]) if (existsSync(file)) expect(readFileSync(file).includes(marker)).toBe(false);
    const listed = await runArbor(["--db", db, "sessions", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(ids(listed)).toEqual([clear, sealed].sort());
    const keyless = await runArbor(["--db", db, "sessions"], { env: { ARBOR_ENCRYPTION_KEY: "" } });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain("ARBOR_ENCRYPTION_KEY");
    // The same log through a symbolic link: its key file is found beside the real file, so a keyless run is refused and writes nothing in clear.
    const link = join(tempDir("arbor-clear-enc-link-"), "link.db");
    symlinkSync(db, link);
    const leak = `LINKED-${randomBytes(4).toString("hex")}`;
    const linked = await runArbor(["--db", link, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, leak], { env: { ARBOR_ENCRYPTION_KEY: "", OPENAI_API_KEY: "test-key" } });
    expect(linked.code).toBe(2);
    expect(linked.stderr).toContain("ARBOR_ENCRYPTION_KEY");
    for (const file of [db, `${db}-wal`]) if (existsSync(file)) expect(readFileSync(file).includes(leak)).toBe(false);
    const wrong = await runArbor(["--db", db, "sessions"], { env: { ARBOR_ENCRYPTION_KEY: key() } });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("was written with another master key");
  });

  it("SQLite: a key file that holds no data key (its sealed sessions deleted) is still refused without the key, and the message says nothing in it is sealed", async () => {
    const db = join(dir, "emptied.db");
    const keys = join(dir, "emptied.keys.db");
    const env = { ARBOR_ENCRYPTION_KEY: key(), OPENAI_API_KEY: "test-key" };
    server.script(textResponse("to be deleted"));
    const run = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "a session to delete"], { env });
    expect(run.code, run.stderr).toBe(0);
    const sealed = /session (\S+)/.exec(run.stderr)![1];
    const rm = await runArbor(["--db", db, "rm", "--yes", sealed], { env });
    expect(rm.code, rm.stderr).toBe(0);
    const before = readFileSync(keys);
    const keyless = await runArbor(["--db", db, "sessions"], { env: { ARBOR_ENCRYPTION_KEY: "" } });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain(keys);
    expect(keyless.stderr).toContain("holds no data key");
    expect(keyless.stderr).toContain("ARBOR_ENCRYPTION_KEY");
    expect(readFileSync(keys).equals(before)).toBe(true);
  });

  it("PostgreSQL: sessions and tree read the clear log with a key and create no key table; a run refused for its API key creates none either", async () => {
    const schema = newSchema();
    keySchemas.push(`${schema}_keys`);
    const id = await clearSession(createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 }));
    const env = { ARBOR_DB_SCHEMA: schema, ARBOR_ENCRYPTION_KEY: key() };
    const client = await testClient();
    try {
      const keyTable = async () => (await client.query<{ found: string | null }>("SELECT to_regnamespace($1)::text AS found", [`${schema}_keys`])).rows[0].found;
      const listed = await runArbor(["--db", PG_URL, "sessions", "--json"], { env });
      expect(listed.code, listed.stderr).toBe(0);
      expect(ids(listed)).toEqual([id]);
      const tree = await runArbor(["--db", PG_URL, "tree", id], { env });
      expect(tree.code, tree.stderr).toBe(0);
      expect(tree.stdout).toContain(CLEAR_TEXT);
      expect(await keyTable()).toBeNull();
      const refused = await runArbor(["--db", PG_URL, "run", "--model", "openai:demo", "--cwd", dir, "enc run"], { env: { ...env, OPENAI_API_KEY: "" } });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("no session was created");
      expect(await keyTable()).toBeNull();
      const keyless = await runArbor(["--db", PG_URL, "sessions", "--json"], { env: { ARBOR_DB_SCHEMA: schema, ARBOR_ENCRYPTION_KEY: "" } });
      expect(keyless.code, keyless.stderr).toBe(0);
      expect(ids(keyless)).toEqual([id]);
    } finally {
      await client.end();
    }
  });
});

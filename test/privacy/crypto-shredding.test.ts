/**
 * Crypto-shredding: with `encryption`, a session's content is sealed with its own data key, and a
 * delete destroys the key, so no copy of the content can be read again: not the SQLite file nor
 * its WAL, not PostgreSQL's table files after a plain VACUUM, not a pg_dump taken before the
 * delete. A copy taken before the delete still opens every other session with the key; a wrong
 * key is a typed error. Real SQLite files, the real PostgreSQL and pg_dump, a real harness run
 * through the @ai-sdk/openai client against a loopback server.
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, serveArbor, tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient } from "../store/pg-test-db.ts";

const execFileAsync = promisify(execFile);

/** The bytes of every file of a relation (all segments and forks) under the data directory, as latin1. */
function relationBytes(dataDirectory: string, path: string): string {
  const base = join(dataDirectory, path);
  const folder = dirname(base);
  const name = basename(base);
  return readdirSync(folder)
    .filter((file) => file === name || file.startsWith(`${name}.`) || file.startsWith(`${name}_`))
    .map((file) => readFileSync(join(folder, file)).toString("latin1"))
    .join("");
}

const fileBytes = (path: string) =>
  ["", "-wal", "-shm", "-journal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

describe("crypto-shredding", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  const key = randomBytes(32);
  beforeAll(async () => {
    dir = tempDir("arbor-shred-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two sessions through a real harness: the first holds `marker` in its prompt, reply and memory. */
  async function twoSessions(log: EventLog, marker: string, kept: string) {
    server.script(textResponse(`Noted: ${marker} is yours.`), textResponse(kept));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const harness = await createHarness({ eventLog: log, models: { main: model }, cwd: dir, memory: {} });
    await harness.prompt(`my private code is ${marker}`);
    await harness.setName(`title ${marker}`);
    await harness.memory!.write("code", { text: `the code ${marker}` });
    const other = await harness.createSession();
    await other.prompt("something to keep");
    await harness.close();
    return { deleted: harness.id, kept: other.id };
  }

  it("SQLite: the content is sealed at rest; after a delete a pre-delete copy opens every other session and not the deleted one", async () => {
    const path = join(dir, "enc.db");
    const log = createSqliteEventLog({ path, encryption: { key } });
    const marker = "MARKER-ENC-7f3a91c2";
    const { deleted, kept } = await twoSessions(log, marker, "KEPT-ENC-2b7c");
    const repository = createSessionRepository({ log });
    // Sealed at rest: neither the deleted nor the kept session's text is in the file or the WAL.
    expect(fileBytes(path)).not.toContain(marker);
    expect(fileBytes(path)).not.toContain("KEPT-ENC-2b7c");
    const opened = await repository.open(deleted);
    expect(JSON.stringify(opened.view.getEntries())).toContain(marker);
    expect(opened.view.name).toBe(`title ${marker}`);
    const memory = await log.memoryIndex!.search("default", `session-${deleted}`, "code", 5);
    expect(JSON.stringify(memory)).toContain(marker);
    expect((await repository.list()).map((row) => row.id).sort()).toEqual([deleted, kept].sort());

    // A backup of the log taken before the delete (the key file is not part of it).
    await log.close();
    const copy = join(dir, "backup.db");
    copyFileSync(path, copy);
    const keyFile = join(dir, "enc.keys.db");
    const keys = new Database(keyFile, { readonly: true });
    const wrapped = (keys.prepare("SELECT wrapped FROM arbor_data_keys WHERE key_id = ?").pluck().get(deleted) as Buffer).toString("latin1");
    keys.close();
    expect(fileBytes(keyFile)).toContain(wrapped);
    const reopened = createSqliteEventLog({ path, encryption: { key } });
    await createSessionRepository({ log: reopened }).delete(deleted);
    expect(fileBytes(path)).not.toContain(marker);
    // The wrapped data key is in no page of the key file nor its WAL: zeroed, checkpointed.
    expect(fileBytes(keyFile)).not.toContain(wrapped);
    await reopened.close();
    expect(fileBytes(keyFile)).not.toContain(wrapped);

    // The copy, with the master key and the key file as it is now: the kept session opens, the deleted one cannot be read.
    const fromCopy = createSqliteEventLog({ path: copy, encryption: { key, keyFile } });
    const copied = createSessionRepository({ log: fromCopy });
    const keptView = (await copied.open(kept)).view;
    expect(JSON.stringify(keptView.getEntries())).toContain("KEPT-ENC-2b7c");
    await expect(fromCopy.readStream(`session-${deleted}`)).rejects.toMatchObject({ code: "DATA_KEY_UNAVAILABLE", details: { reason: "destroyed" } });
    await fromCopy.close();
  });

  /**
   * A database of its own for a PostgreSQL check: VACUUM FULL keeps a deleted row while any
   * backend of the same database holds an older snapshot, so other test files' transactions in the
   * shared database must not decide what this test sees.
   */
  async function ownDatabase(): Promise<{ url: string; client: pg.Client; drop: () => Promise<void> }> {
    const admin = await testClient();
    const name = `shredw_${randomBytes(5).toString("hex")}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const url = PG_URL.replace(/\/[^/]*$/, `/${name}`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      url,
      client,
      drop: async () => {
        await client.end();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  }

  /** The bytes of a relation's files (and its TOAST table's) after a CHECKPOINT, as latin1. */
  async function relationFiles(client: pg.Client, relation: string): Promise<string> {
    await client.query("CHECKPOINT");
    const dataDirectory = (await client.query("SHOW data_directory")).rows[0].data_directory as string;
    const { rows } = await client.query(
      `SELECT pg_relation_filepath(c.oid) AS path FROM pg_class c WHERE c.oid = $1::regclass OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = $1::regclass)`,
      [relation],
    );
    return rows.map((row) => relationBytes(dataDirectory, row.path as string)).join("");
  }

  it("PostgreSQL: after a delete and a plain VACUUM the table files, and a pg_dump taken before, hold nothing readable of the session", async () => {
    const own = await ownDatabase();
    const schema = "shred_log";
    const keySchema = `${schema}_keys`;
    const log = createPostgresEventLog({ connectionString: own.url, schema, encryption: { key } });
    const marker = "MARKER-PGENC-c4d19e07";
    const client = own.client;
    const restoreDb = `shred_${randomBytes(5).toString("hex")}`;
    const admin = await testClient();
    try {
      const { deleted, kept } = await twoSessions(log, marker, "KEPT-PGENC-88e1");
      const { rows: leaked } = await client.query(`SELECT count(*)::int AS n FROM "${schema}".events WHERE data::text LIKE $1`, [`%${marker}%`]);
      expect(leaked[0].n).toBe(0);
      // A backup of the log's schema before the delete (the key schema is backed up apart, on its own retention).
      const dump = join(dir, "before.sql");
      await execFileAsync("pg_dump", ["--dbname", own.url, "--schema", schema, "--file", dump]);
      expect(readFileSync(dump, "latin1")).not.toContain(marker);
      const wrapped = (await client.query(`SELECT wrapped FROM "${keySchema}".data_keys WHERE key_id = $1`, [deleted])).rows[0].wrapped as Buffer;

      await createSessionRepository({ log }).delete(deleted);
      await client.query(`VACUUM "${schema}".events`);
      await client.query(`VACUUM "${schema}".streams`);
      const files = (relation: string) => relationFiles(client, relation);
      const eventFiles = await files(`"${schema}".events`);
      expect(eventFiles.length).toBeGreaterThan(0);
      expect(eventFiles).not.toContain(marker);
      const keyFiles = await files(`"${keySchema}".data_keys`);
      expect(keyFiles.length).toBeGreaterThan(0);
      expect(keyFiles).not.toContain(wrapped.toString("latin1"));

      // The dump restored into another database, with the key table as it is now: the kept session opens, the deleted one cannot be read.
      await admin.query(`CREATE DATABASE ${restoreDb}`);
      const restoreUrl = PG_URL.replace(/\/[^/]*$/, `/${restoreDb}`);
      await execFileAsync("psql", ["--quiet", "--dbname", restoreUrl, "--file", dump]);
      const keysNow = join(dir, "keys-now.sql");
      await execFileAsync("pg_dump", ["--dbname", own.url, "--schema", keySchema, "--file", keysNow]);
      await execFileAsync("psql", ["--quiet", "--dbname", restoreUrl, "--file", keysNow]);
      const restored = createPostgresEventLog({ connectionString: restoreUrl, schema, encryption: { key } });
      try {
        const view = (await createSessionRepository({ log: restored }).open(kept)).view;
        expect(JSON.stringify(view.getEntries())).toContain("KEPT-PGENC-88e1");
        await expect(restored.readStream(`session-${deleted}`)).rejects.toMatchObject({ code: "DATA_KEY_UNAVAILABLE", details: { reason: "destroyed" } });
        const wrong = createPostgresEventLog({ connectionString: restoreUrl, schema, encryption: { key: randomBytes(32) } });
        await expect(wrong.readStream(`session-${kept}`)).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        await wrong.close();
      } finally {
        await restored.close();
      }
    } finally {
      await log.close();
      await admin.query(`DROP DATABASE IF EXISTS ${restoreDb}`);
      await admin.end();
      await own.drop();
    }
  });

  it("PostgreSQL: a delete waits for an older open snapshot before it rewrites the key table, so the key is not copied into the new file", async () => {
    const own = await ownDatabase();
    const log = createPostgresEventLog({ connectionString: own.url, schema: "shred_wait", encryption: { key } });
    const reader = new pg.Client({ connectionString: own.url });
    await reader.connect();
    try {
      const { deleted } = await twoSessions(log, "MARKER-PGWAIT-51d0", "KEPT-PGWAIT-0c2e");
      const wrapped = (await own.client.query(`SELECT wrapped FROM shred_wait_keys.data_keys WHERE key_id = $1`, [deleted])).rows[0].wrapped as Buffer;
      // A transaction whose snapshot, taken before the delete, can still see the key row.
      await reader.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      // (It reads no table, so it takes no lock the rewrite would wait for: only its snapshot holds the row.)
      await reader.query("SELECT 1");
      let settled = false;
      const deleting = createSessionRepository({ log })
        .delete(deleted)
        .finally(() => (settled = true));
      // The delete has committed once the row is gone for a new snapshot; the rewrite must still wait.
      await expect
        .poll(async () => (await own.client.query(`SELECT count(*)::int AS n FROM shred_wait_keys.data_keys WHERE key_id = $1`, [deleted])).rows[0].n, { timeout: 15_000 })
        .toBe(0);
      expect(settled).toBe(false);
      await reader.query("COMMIT");
      await deleting;
      expect(await relationFiles(own.client, "shred_wait_keys.data_keys")).not.toContain(wrapped.toString("latin1"));
    } finally {
      await reader.end();
      await log.close();
      await own.drop();
    }
  });

  it("PostgreSQL: a delete waits for an older transaction in another database before it rewrites the key table (the rewrite's snapshot would keep the key)", async () => {
    const own = await ownDatabase();
    const log = createPostgresEventLog({ connectionString: own.url, schema: "shred_other", encryption: { key } });
    // Another test file's transaction, in another database of the cluster: it cannot read the key table, but while it runs, every snapshot
    // (the table rewrite's own included) starts at its transaction id.
    const elsewhere = await testClient();
    try {
      const { deleted } = await twoSessions(log, "MARKER-PGOTHER-7d21", "KEPT-PGOTHER-93b4");
      const wrapped = (await own.client.query(`SELECT wrapped FROM shred_other_keys.data_keys WHERE key_id = $1`, [deleted])).rows[0].wrapped as Buffer;
      await elsewhere.query("BEGIN");
      await elsewhere.query("SELECT txid_current()");
      let settled = false;
      const deleting = createSessionRepository({ log })
        .delete(deleted)
        .finally(() => (settled = true));
      await expect
        .poll(async () => (await own.client.query(`SELECT count(*)::int AS n FROM shred_other_keys.data_keys WHERE key_id = $1`, [deleted])).rows[0].n, { timeout: 15_000 })
        .toBe(0);
      expect(settled).toBe(false);
      await elsewhere.query("COMMIT");
      await deleting;
      expect(await relationFiles(own.client, "shred_other_keys.data_keys")).not.toContain(wrapped.toString("latin1"));
    } finally {
      await elsewhere.query("ROLLBACK").catch(() => undefined);
      await elsewhere.end();
      await log.close();
      await own.drop();
    }
  });

  it("createHarness({ eventLogPath, eventLogEncryption }) seals what its run writes, and keeps no snapshot file", async () => {
    const path = join(dir, "harness.db");
    const marker = "MARKER-HARNESS-ENC-5a0c";
    server.script(textResponse(`Sure: ${marker}.`));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const harness = await createHarness({ eventLogPath: path, eventLogEncryption: { key }, models: { main: model }, cwd: dir });
    await harness.prompt(`say ${marker}`);
    const id = harness.id;
    await harness.close();
    expect(fileBytes(path)).not.toContain(marker);
    expect(existsSync(join(dir, "harness.keys.db"))).toBe(true);
    expect(existsSync(join(dir, "harness.snapshots.db"))).toBe(false);
    const log = createSqliteEventLog({ path, encryption: { key } });
    expect(JSON.stringify((await createSessionRepository({ log }).open(id)).view.getEntries())).toContain(marker);
    await log.close();
  });

  it("SQLite: a wrong key is refused at open (EncryptionKeyMismatchError), a log opened without encryption refuses sealed data; never garbage", async () => {
    const path = join(dir, "wrong.db");
    const log = createSqliteEventLog({ path, encryption: { key } });
    await twoSessions(log, "MARKER-WRONG-11aa", "KEPT-WRONG");
    const streams = (await log.listStreams()).map((stream) => stream.streamId).filter((id) => id.startsWith("session-"));
    await log.close();
    expect(() => createSqliteEventLog({ path, encryption: { key: randomBytes(32) } })).toThrow(expect.objectContaining({ code: "ENCRYPTION_KEY_MISMATCH", name: "EncryptionKeyMismatchError" }));
    const plain = createSqliteEventLog({ path });
    await expect(plain.readStream(streams[0])).rejects.toMatchObject({ code: "DATA_KEY_UNAVAILABLE", details: { reason: "no_encryption" } });
    await plain.close();
    expect(() => createSqliteEventLog({ path, encryption: { key: randomBytes(16) } })).toThrow(expect.objectContaining({ code: "ENCRYPTION_KEY_INVALID" }));
  });

  it("CLI: ARBOR_ENCRYPTION_KEY seals a run, arbor rm shreds it, arbor keys rotate re-wraps, a wrong key is a clear error", async () => {
    const db = join(dir, "cli.db");
    const marker = "MARKER-CLI-ENC-0b9e44d1";
    const first = randomBytes(32).toString("base64");
    const second = randomBytes(32).toString("hex");
    const env = { OPENAI_API_KEY: "test-key", ARBOR_ENCRYPTION_KEY: first };
    server.script(textResponse(`I will keep ${marker} safe.`), textResponse("KEPT-CLI-ENC"));
    const run = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, `remember ${marker}`], { env });
    expect(run.code, run.stderr).toBe(0);
    const sessionId = /session (\S+)/.exec(run.stderr)![1];
    const keep = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "keep this one"], { env });
    expect(keep.code, keep.stderr).toBe(0);
    expect(fileBytes(db)).not.toContain(marker);
    const listed = await runArbor(["--db", db, "sessions", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(2);
    expect((await runArbor(["--db", db, "doctor"], { env })).code).toBe(0);

    const wrong = await runArbor(["--db", db, "sessions", "--json"], { env: { ARBOR_ENCRYPTION_KEY: second } });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/was written with another master key: its key store .* is under master key local:[0-9a-f]{16}, and this log was given local:[0-9a-f]{16}/);
    expect(wrong.stderr).toContain("ARBOR_ENCRYPTION_KEY");
    expect((await runArbor(["--db", db, "sessions"], { env: { ARBOR_ENCRYPTION_KEY: "too-short" } })).stderr).toContain("ARBOR_ENCRYPTION_KEY must be a 32-byte key");

    const rotate = await runArbor(["--db", db, "keys", "rotate"], { env: { ARBOR_ENCRYPTION_KEY: second, ARBOR_ENCRYPTION_PREVIOUS_KEYS: first } });
    expect(rotate.code, rotate.stderr).toBe(0);
    expect(rotate.stdout).toMatch(/^rotated 2 of 2 data keys to local:[0-9a-f]{16}\n$/);
    const rm = await runArbor(["--db", db, "rm", sessionId], { env: { ARBOR_ENCRYPTION_KEY: second } });
    expect(rm.code, rm.stderr).toBe(0);
    const after = await runArbor(["--db", db, "sessions", "--json"], { env: { ARBOR_ENCRYPTION_KEY: second } });
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toHaveLength(1);
    expect(after.stdout).not.toContain(sessionId);
  });
  it("CLI: a restored pre-delete copy lists and opens the surviving sessions by short id; without the key the error names ARBOR_ENCRYPTION_KEY", async () => {
    const db = join(dir, "restore.db");
    const env = { OPENAI_API_KEY: "test-key", ARBOR_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    server.script(textResponse("REPLY-GONE"), textResponse("REPLY-KEPT"));
    const ids: string[] = [];
    for (const prompt of ["to be deleted", "to be kept"]) {
      const run = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, prompt], { env });
      expect(run.code, run.stderr).toBe(0);
      ids.push(/session (\S+)/.exec(run.stderr)![1]);
    }
    const [gone, kept] = ids;
    const backup = join(dir, "restore-backup.db");
    const plainRead = await runArbor(["--db", db, "sessions"], { env: { ARBOR_ENCRYPTION_KEY: "" } });
    expect(plainRead.code).not.toBe(0);
    expect(plainRead.stderr).toContain("ARBOR_ENCRYPTION_KEY");
    expect(plainRead.stderr).not.toContain("encryption: { key }");
    // A run without the key writes nothing in clear beside the sealed sessions: it is refused.
    const plainMarker = `PLAINMARK-${randomBytes(6).toString("hex")}`;
    const plainRun = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, plainMarker], { env: { OPENAI_API_KEY: "test-key", ARBOR_ENCRYPTION_KEY: "" } });
    expect(plainRun.code).toBe(2);
    expect(plainRun.stderr).toContain("is an encrypted store");
    for (const file of [db, `${db}-wal`]) if (existsSync(file)) expect(readFileSync(file).includes(plainMarker)).toBe(false);
    expect(existsSync(join(dir, "restore.snapshots.db"))).toBe(false);
    copyFileSync(db, backup);
    expect((await runArbor(["--db", db, "rm", gone], { env })).code).toBe(0);
    copyFileSync(backup, db);
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
    const listed = await runArbor(["--db", db, "sessions", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((row) => row.id)).toEqual([kept]);
    const short = kept.replace(/-/g, "").slice(-8);
    const tree = await runArbor(["--db", db, "tree", short], { env });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toContain("REPLY-KEPT");
    const opened = await runArbor(["--db", db, "tree", gone], { env });
    expect(opened.code).not.toBe(0);
    expect(opened.stderr).toContain("destroyed");
  });

  it("CLI: arbor serve on an encrypted SQLite store refuses at start without the key, or with another key, naming ARBOR_ENCRYPTION_KEY", async () => {
    const db = join(dir, "serve.db");
    const log = createSqliteEventLog({ path: db, encryption: { key } });
    await createSessionRepository({ log }).create({ id: "serve-1", cwd: dir });
    await log.close();
    const flags = ["--db", db, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", server.url, "--port", "0"];
    for (const value of ["", randomBytes(32).toString("base64")]) {
      const serve = serveArbor(flags, { OPENAI_API_KEY: "test-key", ARBOR_ENCRYPTION_KEY: value });
      const outcome = await Promise.race([serve.exited, serve.ready.then(() => "started" as const)]);
      if (outcome === "started") {
        serve.child().kill("SIGKILL");
        await serve.exited;
      }
      expect(outcome).not.toBe("started");
      expect(outcome).toMatchObject({ code: 2 });
      expect((outcome as { stderr: string }).stderr).toContain("ARBOR_ENCRYPTION_KEY");
    }
  });
});

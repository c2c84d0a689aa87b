/**
 * A delete that really deletes: after `repository.delete(id)` / `arbor rm`, a unique marker from
 * the deleted session's messages is in no byte of the SQLite file or its WAL (the log still
 * open, and after the CLI's process ended), no PostgreSQL row holds it, and a content-free
 * tombstone explains the hole in the global order. Real SQLite files, real PostgreSQL, the real
 * CLI in a child process, the real @ai-sdk/openai client against a loopback server.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { tombstoneStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { testClient, useTestSchemas } from "../store/pg-test-db.ts";

const fileBytes = (path: string) =>
  ["", "-wal", "-shm", "-journal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

describe("deleting a session", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  const schema = useTestSchemas("privacy");
  beforeAll(async () => {
    dir = tempDir("arbor-privacy-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two sessions through a real harness: the first holds `marker` in its prompt and reply. */
  async function twoSessions(log: EventLog, marker: string) {
    server.script(textResponse(`Noted: ${marker} is yours.`), textResponse("KEPT-REPLY-2b7c"));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const harness = await createHarness({ eventLog: log, models: { main: model }, cwd: dir });
    await harness.prompt(`my private code is ${marker}`);
    const other = await harness.createSession();
    await other.prompt("something to keep");
    await harness.close();
    return { deleted: harness.id, kept: other.id };
  }

  it("SQLite: no page of the open log's file or WAL holds the deleted text; a tombstone explains the hole", async () => {
    const path = join(dir, "library.db");
    const log = createSqliteEventLog({ path });
    const marker = "MARKER-LIB-5c1e93ad";
    const { deleted, kept } = await twoSessions(log, marker);
    expect(fileBytes(path)).toContain(marker);
    const repository = createSessionRepository({ log });
    const before = await log.readAll();
    const removed = before.filter((event) => event.streamId === `session-${deleted}`);
    await repository.delete(deleted);

    // Still open: the WAL was checkpointed and the freed pages zeroed.
    expect(fileBytes(path)).not.toContain(marker);
    expect(fileBytes(path)).toContain("KEPT-REPLY-2b7c");
    await expect(repository.open(deleted)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect((await repository.open(kept)).view.info.sessionId).toBe(kept);

    const [tombstone] = await log.readStream(tombstoneStreamId(deleted));
    expect(tombstone.type).toBe("session.deleted");
    expect(tombstone.data).toMatchObject({
      sessionId: deleted,
      tenant: "default",
      eventCount: removed.length,
      firstGlobalPosition: removed[0].globalPosition,
      lastGlobalPosition: removed.at(-1)!.globalPosition,
    });
    expect((tombstone.data as { messageCount: number }).messageCount).toBe(2);
    expect(JSON.stringify(tombstone)).not.toContain(marker);
    // Every position up to the head is an event or inside a tombstone's range: no unexplained hole.
    const after = await log.readAll();
    const explained = new Set(after.map((event) => event.globalPosition));
    for (const event of after) {
      if (event.type !== "session.deleted") continue;
      const data = event.data as { firstGlobalPosition: number; lastGlobalPosition: number };
      for (let position = data.firstGlobalPosition; position <= data.lastGlobalPosition; position++) explained.add(position);
    }
    const head = await log.headPosition();
    expect(Array.from({ length: head }, (_, index) => index + 1).filter((position) => !explained.has(position))).toEqual([]);
    expect((await repository.list()).map((row) => row.id)).toEqual([kept]);
    await log.close();
    expect(fileBytes(path)).not.toContain(marker);
  });

  it("PostgreSQL: the rows are deleted and the tombstone remains", async () => {
    const log = createPostgresEventLog({ connectionString: "postgres://postgres@127.0.0.1:5432/test", schema: schema() });
    const marker = "MARKER-PG-e2a4410f";
    try {
      const { deleted } = await twoSessions(log, marker);
      await createSessionRepository({ log }).delete(deleted);
      const client = await testClient();
      try {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${log.schema}".events WHERE data::text LIKE $1`, [`%${marker}%`]);
        expect(rows[0].n).toBe(0);
        const streams = await client.query(`SELECT stream_id FROM "${log.schema}".streams WHERE stream_id = $1`, [`session-${deleted}`]);
        expect(streams.rowCount).toBe(0);
      } finally {
        await client.end();
      }
      const [tombstone] = await log.readStream(tombstoneStreamId(deleted));
      expect(tombstone.data).toMatchObject({ sessionId: deleted, messageCount: 2 });
    } finally {
      await log.close();
    }
  });

  it("arbor rm: the marker is nowhere in the database files afterwards", async () => {
    const db = join(dir, "cli.db");
    const marker = "MARKER-CLI-9d03b6e1";
    server.script(textResponse(`I will keep ${marker} safe.`));
    const run = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, `remember ${marker}`], { env: { OPENAI_API_KEY: "test-key" } });
    expect(run.code).toBe(0);
    const sessionId = /session (\S+)/.exec(run.stderr)![1];
    expect(fileBytes(db)).toContain(marker);
    const rm = await runArbor(["--db", db, "rm", sessionId]);
    expect(rm.code).toBe(0);
    expect(fileBytes(db)).not.toContain(marker);
    const sessions = await runArbor(["--db", db, "sessions", "--json"]);
    expect(JSON.parse(sessions.stdout)).toEqual([]);
  });

  it("arbor rm: the bash spill files the session's results point at are deleted too, others are kept", async () => {
    const db = join(dir, "spill.db");
    const tmp = join(dir, "tmp");
    mkdirSync(tmp, { recursive: true });
    const spillFiles = () =>
      existsSync(join(tmp, "arbor-tool-output"))
        ? readdirSync(join(tmp, "arbor-tool-output"), { recursive: true, encoding: "utf8" }).filter((name) => /arbor-bash-[0-9a-f]+\.log$/.test(name))
        : [];
    const marker = "MARKER-SPILL-41ad7c20";
    const env = { OPENAI_API_KEY: "test-key", TMPDIR: tmp };
    const bash = (id: string, command: string) => toolCallResponse([{ id, name: "bash", arguments: { command } }]);
    // Two sessions whose bash output is long enough to spill (more than 2,000 lines).
    server.script(bash("call_a", `seq 1 5000; echo ${marker}`), textResponse("done"));
    const first = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "print a lot"], { env });
    expect(first.code, first.stderr).toBe(0);
    const deletedSession = /session (\S+)/.exec(first.stderr)![1];
    const [spilled] = spillFiles();
    expect(spilled).toBeDefined();
    expect(readFileSync(join(tmp, "arbor-tool-output", spilled!), "utf8")).toContain(marker);
    server.script(bash("call_b", "seq 1 5000"), textResponse("done"));
    const second = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "print a lot again"], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(spillFiles()).toHaveLength(2);
    const rm = await runArbor(["--db", db, "rm", deletedSession], { env });
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toContain(`deleted ${deletedSession} and 1 spill file(s)`);
    const left = spillFiles();
    expect(left).toHaveLength(1);
    expect(left).not.toContain(spilled);
  });
});

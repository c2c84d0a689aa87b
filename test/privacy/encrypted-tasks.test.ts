/**
 * Background and scheduled prompts on an encrypted log: the prompt of a queued task (`task.queued`
 * on the stream `task-<taskId>`, not a session's stream) is sealed with its session's data key, so
 * it is not in clear at rest and a delete of the session shreds it with the rest of the session.
 * A worker still runs a queued prompt with its text before the delete; after it, the task of the
 * deleted session reads without its prompt and a worker ends it `failed`, reporting no error.
 * Real SQLite files (raw bytes of the file and its WAL), the real PostgreSQL (the rows' text), a
 * real worker and harness through the @ai-sdk/openai client against a loopback server.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createWorker } from "../../src/harness/worker.ts";
import { SHREDDED_PROMPT } from "../../src/store/crypto/log-cipher.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { readTask } from "../../src/store/task-queue.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const newSchema = useTestSchemas("enctask");

const fileBytes = (path: string) =>
  ["", "-wal", "-shm", "-journal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

interface Backend {
  name: string;
  open(): EventLog;
  /** Every stored byte (SQLite) or row text (PostgreSQL) of the log. */
  stored(): Promise<string>;
  drop(): Promise<void>;
}

describe("encrypted task prompts", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  const key = randomBytes(32);
  beforeAll(async () => {
    dir = tempDir("arbor-enctask-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const backends: Record<string, () => Backend> = {
    SQLite: () => {
      const path = join(dir, `tasks-${randomBytes(4).toString("hex")}.db`);
      return { name: "SQLite", open: () => createSqliteEventLog({ path, encryption: { key } }), stored: async () => fileBytes(path), drop: async () => {} };
    },
    PostgreSQL: () => {
      const schema = newSchema();
      return {
        name: "PostgreSQL",
        open: () => createPostgresEventLog({ connectionString: PG_URL, schema, encryption: { key } }),
        async stored() {
          const client = await testClient();
          try {
            const { rows } = await client.query(`SELECT stream_id, type, data::text AS data, metadata::text AS metadata FROM "${schema}".events`);
            return JSON.stringify(rows);
          } finally {
            await client.end();
          }
        },
        async drop() {
          const client = await testClient();
          await client.query(`DROP SCHEMA IF EXISTS "${schema}_keys" CASCADE`);
          await client.end();
        },
      };
    },
  };

  it.each(Object.keys(backends))("%s: the queued prompt is sealed, run with its text, and shredded by the session's delete", async (name) => {
    const backend = backends[name]();
    const log = backend.open();
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const errors: unknown[] = [];
    try {
      const harness = await createHarness({ eventLog: log, models: { main: model }, cwd: dir });
      const doomed = await harness.createSession();
      const kept = await harness.createSession();
      const doomedMarker = `TASK-SHRED-${randomBytes(6).toString("hex")}`;
      const keptMarker = `TASK-KEPT-${randomBytes(6).toString("hex")}`;
      const gone = await harness.start(doomed.id, `background: ${doomedMarker}`);
      const scheduled = await harness.start(doomed.id, [{ role: "user", content: [{ type: "text", text: `scheduled: ${doomedMarker}` }], timestamp: Date.now() }], {
        startAt: Date.now() + 3_600_000,
      });
      const run = await harness.start(kept.id, `background: ${keptMarker}`);
      await harness.close();

      // Sealed at rest, read back in clear through the log.
      expect(await backend.stored()).not.toContain(doomedMarker);
      expect(await backend.stored()).not.toContain(keptMarker);
      expect((await readTask(log, gone.taskId))!.input).toBe(`background: ${doomedMarker}`);
      expect(JSON.stringify((await readTask(log, scheduled.taskId))!.input)).toContain(`scheduled: ${doomedMarker}`);

      await createSessionRepository({ log }).delete(doomed.id);
      expect(await backend.stored()).not.toContain(doomedMarker);
      // The tasks stay (the log keeps its positions), their prompts do not.
      expect((await readTask(log, gone.taskId))!.input).toBe(SHREDDED_PROMPT);
      expect((await readTask(log, scheduled.taskId))!.input).toBe(SHREDDED_PROMPT);
      expect(JSON.stringify(await log.readAll())).not.toContain(doomedMarker);

      // A worker runs the kept session's prompt with its text, and ends the deleted session's due task without crashing.
      server.script(textResponse("KEPT-REPLY"));
      const requestsBefore = server.requests.length;
      const worker = createWorker({ eventLog: log, models: { main: model }, cwd: dir, sweepIntervalMs: 50, retryDelayMs: 50, onError: (error) => errors.push(error) });
      try {
        await expect.poll(async () => (await readTask(log, run.taskId))?.ended?.status, { timeout: 30_000 }).toBe("done");
        await expect.poll(async () => (await readTask(log, gone.taskId))?.ended?.status, { timeout: 30_000 }).toBe("failed");
      } finally {
        await worker.close();
      }
      expect((await readTask(log, gone.taskId))!.ended).toMatchObject({ code: "DATA_KEY_UNAVAILABLE" });
      expect((await readTask(log, scheduled.taskId))!.ended).toBeUndefined();
      const requests = JSON.stringify(server.requests.slice(requestsBefore));
      expect(requests).toContain(keptMarker);
      expect(requests).not.toContain(doomedMarker);
      expect(requests).not.toContain(SHREDDED_PROMPT);
      expect(errors).toEqual([]);
      expect(await backend.stored()).not.toContain(keptMarker);
    } finally {
      await log.close();
      await backend.drop();
    }
  });
});

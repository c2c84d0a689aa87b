/**
 * `DELETE /api/sessions/:id` of a half-deleted session: a delete that stopped after destroying the
 * session's data key (its key row is removed by hand here) left its events. Over real HTTP (the
 * handler on loopback), on an encrypted SQLite file and on the real PostgreSQL: another tenant's
 * DELETE and GET answer exactly as for a missing session (status and body, the id aside) and remove
 * nothing; the owner's DELETE answers `200 { deleted }` as for any session and finishes the delete.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { tombstoneStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-half-deleted-http-"));
const nextSchema = useTestSchemas("halfhttp");
const keySchemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const client = await testClient();
  for (const name of keySchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.end();
});
const TOKENS: Record<string, string> = { "Bearer token-a": "tenant-a", "Bearer token-b": "tenant-b" };
const key = randomBytes(32);

const backends: [string, () => { open: () => EventLog; destroyKey: (id: string) => Promise<void> }][] = [
  [
    "SQLite",
    () => {
      const path = join(dir, `${randomBytes(4).toString("hex")}.db`);
      return {
        open: () => createSqliteEventLog({ path, encryption: { key } }),
        async destroyKey(id) {
          const keys = new Database(path.replace(/\.db$/, ".keys.db"));
          expect(keys.prepare("DELETE FROM arbor_data_keys WHERE key_id = ?").run(id).changes).toBe(1);
          keys.close();
        },
      };
    },
  ],
  [
    "PostgreSQL",
    () => {
      const schema = nextSchema();
      keySchemas.push(`${schema}_keys`);
      return {
        open: () => createPostgresEventLog({ connectionString: PG_URL, schema, encryption: { key } }),
        async destroyKey(id) {
          const client = await testClient();
          try {
            expect((await client.query(`DELETE FROM "${schema}_keys".data_keys WHERE key_id = $1`, [id])).rowCount).toBe(1);
          } finally {
            await client.end();
          }
        },
      };
    },
  ],
];

describe.each(backends)("DELETE of a half-deleted session on %s", (_name, make) => {
  it("answers another tenant as for a missing session and removes nothing; the owner's DELETE is 200 and finishes it", { timeout: 60_000 }, async () => {
    const backend = make();
    const id = "half-chat";
    const writer = backend.open();
    const session = await createSessionRepository({ log: writer, tenant: "tenant-a" }).create({ id, cwd: dir });
    await session.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: "a question" }], timestamp: 1_000 } });
    await writer.close();
    await backend.destroyKey(id);

    const log = backend.open();
    const harness = await createHarness({ eventLog: log, cwd: dir, models: { main: { model: createOpenAIModel({ modelId: "m", baseURL: "http://127.0.0.1:9/v1", apiKey: "x", api: "chat" }) } } });
    const server = await startChatServer({ handler: createChatHandler({ harness, cwd: dir, authenticate: (request: Request) => TOKENS[request.headers.get("authorization") ?? ""] }) });
    try {
      const call = async (token: string, method: string, sessionId: string) => {
        const response = await fetch(`${server.url}/api/sessions/${sessionId}`, { method, headers: { authorization: `Bearer ${token}` } });
        return { status: response.status, body: (await response.text()).split(sessionId).join("<id>") };
      };
      for (const method of ["DELETE", "GET"]) {
        const refused = await call("token-b", method, id);
        expect(refused).toEqual(await call("token-b", method, "no-such-chat"));
        expect(refused.status).toBe(404);
      }
      expect(await log.streamVersion(`session-${id}`)).toBe(2);

      const deleted = await call("token-a", "DELETE", id);
      expect(deleted).toEqual({ status: 200, body: JSON.stringify({ deleted: "<id>" }) });
      expect(await log.streamVersion(`session-${id}`)).toBe(0);
      expect((await log.readStream(tombstoneStreamId(id)))[0].data).toMatchObject({ sessionId: id, tenant: "tenant-a", eventCount: 2, entryCount: 1, keyDestroyed: true });
      expect(await call("token-a", "DELETE", id)).toEqual(await call("token-a", "DELETE", "no-such-chat"));
    } finally {
      await server.close();
      await harness.close();
    }
  });
});

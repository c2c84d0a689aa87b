/**
 * A half-deleted session: on an encrypted log a delete destroys the session's data key, then
 * removes its rows; a delete stopped in between leaves rows nothing can open. Its key row is removed
 * from the key store by hand here (that is the state such a crash leaves), then the library's
 * `repository.delete` must finish the delete from what is in clear: the owner's delete removes the
 * rows (sealed batches and the session index with them on SQLite) and writes a tombstone; another
 * tenant's delete and open answer exactly as for a missing session and leave the rows. Real SQLite
 * files and the real PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import { tombstoneStreamId, type SessionDeletedData } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { testClient, useTestSchemas } from "../store/pg-test-db.ts";

const dir = tempDir("arbor-half-deleted-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const newSchema = useTestSchemas("halfdel");
const keySchemas: string[] = [];
afterAll(async () => {
  const client = await testClient();
  for (const name of keySchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.end();
});

const key = randomBytes(32);
const message = (role: "user" | "assistant", text: string) =>
  role === "user" ? { role, content: text, timestamp: 1 } : { role, content: [{ type: "text", text }], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 };

interface Backend {
  name: string;
  open(): EventLog;
  /** Removes the session's key row from the key store: the state of a delete that stopped after destroying the key. */
  destroyKey(sessionId: string): Promise<void>;
  /** SQLite: the rows of the session's sealed batches and of its session index (undefined on PostgreSQL). */
  sideRows?(streamId: string, positions: [number, number]): { batches: number; index: number };
}

function sqliteBackend(): Backend {
  const path = join(dir, `log-${randomBytes(4).toString("hex")}.db`);
  return {
    name: "SQLite",
    open: () => createSqliteEventLog({ path, encryption: { key } }),
    async destroyKey(sessionId) {
      const keys = new Database(path.replace(/\.db$/, ".keys.db"));
      expect(keys.prepare("DELETE FROM arbor_data_keys WHERE key_id = ?").run(sessionId).changes).toBe(1);
      keys.close();
    },
    sideRows(streamId, [first, last]) {
      const db = new Database(path, { readonly: true });
      try {
        const batches = db.prepare("SELECT count(*) FROM arbor_sealed_batches WHERE position BETWEEN ? AND ?").pluck().get(first, last) as number;
        const index = db.prepare("SELECT count(*) FROM arbor_entry_index WHERE stream_id = ?").pluck().get(streamId) as number;
        return { batches, index };
      } finally {
        db.close();
      }
    },
  };
}

function pgBackend(): Backend {
  const schema = newSchema();
  keySchemas.push(`${schema}_keys`);
  return {
    name: "PostgreSQL",
    open: () => createPostgresEventLog({ connectionString: process.env.ARBOR_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test", schema, encryption: { key } }),
    async destroyKey(sessionId) {
      const client = await testClient();
      try {
        expect((await client.query(`DELETE FROM "${schema}_keys".data_keys WHERE key_id = $1`, [sessionId])).rowCount).toBe(1);
      } finally {
        await client.end();
      }
    },
  };
}

describe.each([sqliteBackend, pgBackend])("a half-deleted session", (make) => {
  const backend = make();
  it(`${backend.name}: its owner's delete finishes it; another tenant's delete and open see a missing session`, { timeout: 60_000 }, async () => {
    const id = `half-${randomBytes(4).toString("hex")}`;
    const keptId = `kept-${randomBytes(4).toString("hex")}`;
    const first = backend.open();
    const acme = createSessionRepository({ log: first, tenant: "acme" });
    const session = await acme.create({ id });
    // One append of several events: on SQLite a sealed batch.
    await session.appendEntries([{ type: "message", message: message("user", "HALF-MARKER one") }, { type: "message", message: message("assistant", "two") }, { type: "message", message: message("user", "three") }]);
    await session.appendEvents([{ type: "leaf.moved", data: { leafId: null, fromLeafId: session.view.leafId } }]);
    const kept = await acme.create({ id: keptId });
    await kept.appendEntries([{ type: "message", message: message("user", "kept") }]);
    const before = await first.readStream(`session-${id}`);
    const positions: [number, number] = [before[0].globalPosition, before[before.length - 1].globalPosition];
    if (backend.sideRows) expect(backend.sideRows(`session-${id}`, positions)).toEqual({ batches: 1, index: 3 });
    await first.close();
    await backend.destroyKey(id);

    const log = backend.open();
    try {
      const other = createSessionRepository({ log, tenant: "other" });
      const owner = createSessionRepository({ log, tenant: "acme" });
      const missing = `missing-${randomBytes(4).toString("hex")}`;
      // Another tenant: exactly a missing session (error, message and details, the id aside), and nothing is removed.
      const asMissing = async (run: (repo: typeof other, sessionId: string) => Promise<unknown>) => {
        const [mine, absent] = await Promise.all([run(other, id).catch((error: unknown) => error), run(other, missing).catch((error: unknown) => error)]);
        const shape = (error: unknown, sessionId: string) => {
          const typed = error as { name: string; code: string; message: string; details: unknown };
          return JSON.parse(JSON.stringify({ name: typed.name, code: typed.code, message: typed.message, details: typed.details }).split(sessionId).join("<id>")) as unknown;
        };
        expect(shape(mine, id)).toEqual(shape(absent, missing));
        expect((mine as { code: string }).code).toBe("SESSION_NOT_FOUND");
      };
      await asMissing((repo, sessionId) => repo.delete(sessionId));
      await asMissing((repo, sessionId) => repo.open(sessionId));
      expect(await log.streamVersion(`session-${id}`)).toBe(before.length);
      expect(await log.streamVersion(tombstoneStreamId(id))).toBe(0);

      // Its owner cannot open it (its key is gone), and deleting it finishes the delete.
      await expect(owner.open(id)).rejects.toMatchObject({ code: "DATA_KEY_UNAVAILABLE", details: { reason: "destroyed" } });
      await owner.delete(id);
      expect(await log.streamVersion(`session-${id}`)).toBe(0);
      expect(await log.readStream(`session-${id}`)).toEqual([]);
      if (backend.sideRows) expect(backend.sideRows(`session-${id}`, positions)).toEqual({ batches: 0, index: 0 });
      const tombstones = await log.readStream(tombstoneStreamId(id));
      expect(tombstones).toHaveLength(1);
      const data = tombstones[0].data as SessionDeletedData;
      expect(data).toMatchObject({
        sessionId: id,
        tenant: "acme",
        createdAt: before[0].time,
        lastEventAt: before[before.length - 1].time,
        eventCount: before.length,
        entryCount: 3,
        messageCount: 0,
        firstGlobalPosition: positions[0],
        lastGlobalPosition: positions[1],
        keyDestroyed: true,
      });
      expect(data.audit).toBeUndefined();
      expect(JSON.stringify(tombstones)).not.toContain("HALF-MARKER");
      // Done: a second delete finds nothing; the other session is untouched.
      await expect(owner.delete(id)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
      expect((await owner.open(keptId)).view.getEntries()).toHaveLength(1);
      expect((await owner.list()).map((row) => row.id)).toEqual([keptId]);
    } finally {
      await log.close();
    }
  });

  it(`${backend.name}: an append to it is refused, never sealed with a new key, and its delete still finishes`, { timeout: 60_000 }, async () => {
    const id = `half-${randomBytes(4).toString("hex")}`;
    const first = backend.open();
    const session = await createSessionRepository({ log: first }).create({ id });
    await session.appendEntries([{ type: "message", message: message("user", "sealed with the old key") }]);
    const before = await first.streamVersion(`session-${id}`);
    await first.close();
    await backend.destroyKey(id);

    const log = backend.open();
    try {
      await expect(log.append(`session-${id}`, [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }])).rejects.toMatchObject({
        code: "DATA_KEY_UNAVAILABLE",
        details: { keyId: id, reason: "destroyed" },
      });
      expect(await log.streamVersion(`session-${id}`)).toBe(before);
      await createSessionRepository({ log }).delete(id);
      expect(await log.streamVersion(`session-${id}`)).toBe(0);
      // A new session of the same id gets a new key, as after any finished delete.
      const again = await createSessionRepository({ log }).create({ id });
      await again.appendEntries([{ type: "message", message: message("user", "new") }]);
      expect((await createSessionRepository({ log }).open(id)).view.getEntries()).toHaveLength(1);
    } finally {
      await log.close();
    }
  });
});

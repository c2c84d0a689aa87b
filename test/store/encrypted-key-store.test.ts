/**
 * When an encrypted log's key store comes to exist: at the first sealed write, never at an open or a
 * read. A log opened with a master key that writes nothing sealed leaves no key file or key table and
 * is bound to no key; a read-only open with a key reads a log that has none; two processes' logs
 * opened with different keys before the store exists are bound by the first sealed write, and the
 * other's sealed write is refused; sealed data whose key store is gone is an error naming it. Real
 * SQLite files and the real PostgreSQL; a write while the key store is gone and the log holds sealed data
 * is refused on both.
 */
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import type { EncryptionOptions } from "../../src/store/crypto/log-cipher.ts";
import { createLocalKeyProvider } from "../../src/store/crypto/master-key.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const dir = tempDir("arbor-key-store-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const newSchema = useTestSchemas("keystore");
const keySchemas: string[] = [];
afterAll(async () => {
  const client = await testClient();
  for (const name of keySchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.end();
});

const created = (sessionId: string) => ({ type: "session.created", data: { sessionId, cwd: "/w", createdAt: "2026-12-07T00:00:00.000Z", tenant: "acme" } });
const released = { type: "task.released", data: { taskId: "t1", attempt: 1, reason: "x" } };

interface Backend {
  name: string;
  open(options?: { encryption?: EncryptionOptions; readOnly?: boolean }): EventLog;
  keyStoreExists(): Promise<boolean>;
  removeKeyStore(): Promise<void>;
}

function sqliteBackend(): Backend {
  const path = join(dir, `log-${randomBytes(4).toString("hex")}.db`);
  const keyFile = path.replace(/\.db$/, ".keys.db");
  return {
    name: "SQLite",
    open: (options = {}) => createSqliteEventLog({ path, ...options }),
    keyStoreExists: async () => existsSync(keyFile),
    async removeKeyStore() {
      for (const suffix of ["", "-wal", "-shm"]) rmSync(keyFile + suffix, { force: true });
    },
  };
}

function pgBackend(): Backend {
  const schema = newSchema();
  keySchemas.push(`${schema}_keys`);
  const sql = async (text: string, values: unknown[] = []) => {
    const client = await testClient();
    try {
      return (await client.query(text, values)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  };
  return {
    name: "PostgreSQL",
    open: (options = {}) => createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2, ...options }),
    keyStoreExists: async () => (await sql("SELECT to_regnamespace($1)::text AS found", [`${schema}_keys`]))[0].found !== null,
    removeKeyStore: async () => void (await sql(`DROP SCHEMA "${schema}_keys" CASCADE`)),
  };
}

/** A clear log: one session and one task event, written without encryption. */
async function clearLog(backend: Backend): Promise<void> {
  const log = backend.open();
  await log.append("session-c1", [created("c1")]);
  await log.append("task-t1", [released]);
  await log.close();
}

for (const make of [sqliteBackend, pgBackend]) {
  describe(`${make().name}: the key store of an encrypted log`, { timeout: 60_000 }, () => {
    it("an open with a key that writes nothing sealed creates no key store and binds no key; the first sealed write creates it under its key", async () => {
      const backend = make();
      await clearLog(backend);
      const mistyped = randomBytes(32);
      const log = backend.open({ encryption: { key: mistyped } });
      expect((await log.readStream("session-c1")).map((event) => event.data)).toEqual([created("c1").data]);
      // A stream that is not a session's is written in clear: no key, no key store.
      await log.append("task-t1", [released]);
      await log.close();
      expect(await backend.keyStoreExists()).toBe(false);

      const right = randomBytes(32);
      const writer = backend.open({ encryption: { key: right } });
      await writer.append("session-s1", [created("s1")]);
      await writer.close();
      expect(await backend.keyStoreExists()).toBe(true);
      // SQLite refuses at open, PostgreSQL at the first call.
      const readWith = async (key: Buffer) => {
        const reader = backend.open({ encryption: { key } });
        try {
          return await reader.readStream("session-c1");
        } finally {
          await reader.close().catch(() => undefined);
        }
      };
      await expect(readWith(mistyped)).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH", details: { storedMasterKeyId: createLocalKeyProvider(right).id } });
      expect(await readWith(right)).toHaveLength(1);
    });

    it("a read-only open with a key reads a log that has no key store, and creates none", async () => {
      const backend = make();
      await clearLog(backend);
      const reader = backend.open({ encryption: { key: randomBytes(32) }, readOnly: true });
      try {
        expect((await reader.readAll()).map((event) => event.type)).toEqual(["session.created", "task.released"]);
      } finally {
        await reader.close();
      }
      expect(await backend.keyStoreExists()).toBe(false);
    });

    it("two logs opened with different keys before the key store exists: the first sealed write binds it, the other's is refused and writes nothing", async () => {
      const backend = make();
      await clearLog(backend);
      const first = backend.open({ encryption: { key: randomBytes(32) } });
      const second = backend.open({ encryption: { key: randomBytes(32) } });
      try {
        await first.readStream("session-c1");
        await second.readStream("session-c1");
        await first.append("session-a", [created("a")]);
        await expect(second.append("session-b", [created("b")])).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        // Final: nothing else is read or written with that key.
        await expect(second.append("session-c1", [created("c1")], { expectedVersion: 1 })).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        expect(await first.streamVersion("session-b")).toBe(0);
      } finally {
        await first.close();
        await second.close().catch(() => undefined);
      }
    });

    it("sealed data whose key store is gone is EncryptionKeyError naming the missing key store, not a destroyed key; no key store is created", async () => {
      const backend = make();
      const key = randomBytes(32);
      const writer = backend.open({ encryption: { key } });
      await writer.append("session-s1", [created("s1")]);
      await writer.close();
      await backend.removeKeyStore();
      for (const readOnly of [false, true]) {
        const reader = backend.open({ encryption: { key }, readOnly });
        try {
          const read = reader.readStream("session-s1");
          await expect(read).rejects.toMatchObject({ code: "ENCRYPTION_KEY_INVALID", details: { keyId: "s1" } });
          await expect(read).rejects.toThrow(/The key store .* of the encrypted log .* does not exist, and the log holds data sealed with the key of session "s1"/);
        } finally {
          await reader.close();
        }
      }
      expect(await backend.keyStoreExists()).toBe(false);
    });
  });
}

for (const make of [sqliteBackend, pgBackend]) {
  describe(`${make().name}: a key store that is gone`, { timeout: 60_000 }, () => {
    it("is never created anew by a write while the log holds sealed data (EncryptionKeyError naming it, nothing written)", async () => {
      const backend = make();
      const key = randomBytes(32);
      const writer = backend.open({ encryption: { key } });
      await writer.append("session-s1", [created("s1")]);
      await writer.close();
      await backend.removeKeyStore();
      const again = backend.open({ encryption: { key } });
      try {
        const head = await again.headPosition();
        const refused = again.append("session-s2", [created("s2")]);
        await expect(refused).rejects.toMatchObject({ code: "ENCRYPTION_KEY_INVALID", name: "EncryptionKeyError" });
        await expect(refused).rejects.toThrow(/The key store .* does not exist, but the log holds sealed data: its key store was lost or moved/);
        await expect(refused).rejects.toThrow(backend.name === "SQLite" ? ".keys.db" : "_keys\".data_keys");
        expect(await again.headPosition()).toBe(head);
      } finally {
        await again.close();
      }
      expect(await backend.keyStoreExists()).toBe(false);
    });
  });
}

/**
 * The encrypted logs (`encryption` on the SQLite and PostgreSQL logs): idempotent retries of
 * sealed events, reads and subscriptions in clear, key rotation with `previousKeys`, tampering
 * refused, a KMS-style asynchronous key provider, the sealed memory projection, projections that
 * keep no plaintext. Real SQLite files and the real PostgreSQL.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import Database from "better-sqlite3";
import { firstValueFrom, take, toArray } from "rxjs";
import { afterAll, describe, expect, it } from "vitest";
import type { EventLog } from "../../src/store/event-log.ts";
import type { DeltaRetention } from "../../src/store/log/delta-retention.ts";
import { createLocalKeyProvider, type KeyProvider } from "../../src/store/crypto/master-key.ts";
import type { EncryptionOptions } from "../../src/store/crypto/log-cipher.ts";
import { KEY_CHECK_ID } from "../../src/store/crypto/session-keys.ts";
import { createPostgresEventLog, openPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const dir = tempDir("arbor-encrypted-log-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const newSchema = useTestSchemas("enc");
const keySchemas: string[] = [];
afterAll(async () => {
  const client = await testClient();
  for (const name of keySchemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  await client.end();
});

const fileBytes = (path: string) =>
  ["", "-wal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

/** A provider that answers asynchronously, as a KMS does, around a local key. */
function asyncProvider(id: string, key: Buffer): KeyProvider & { calls: number } {
  const local = createLocalKeyProvider(key);
  const provider = {
    id,
    calls: 0,
    async wrap(dataKey: Buffer, context: string) {
      provider.calls += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return local.wrap(dataKey, context) as Buffer;
    },
    async unwrap(wrapped: Buffer, context: string) {
      provider.calls += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return local.unwrap(wrapped, context) as Buffer;
    },
  };
  return provider;
}

const created = (sessionId: string) => ({ type: "session.created", data: { sessionId, cwd: "/secret/cwd", createdAt: "2026-12-07T00:00:00.000Z", tenant: "acme" } });
const message = (id: string, text: string) => ({
  type: "entry.appended",
  data: { entry: { type: "message", id, parentId: null, timestamp: "2026-12-07T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } } },
});

interface Backend {
  name: string;
  open(encryption?: EncryptionOptions, retention?: DeltaRetention): EventLog;
  /** Opens and waits until the log is ready (SQLite opens at once; PostgreSQL checks its schema and key check first); closes it again. */
  opened(encryption: EncryptionOptions): Promise<void>;
  /** Every stored byte of the log and its key store (SQLite: the files and their WALs), or every row of their tables (PostgreSQL). */
  snapshot(): Promise<string>;
  /** Removes the key check row, as in a store written before the key check existed; returns whether there was one. */
  dropKeyCheck(): Promise<boolean>;
  /** The stored `data` text of every event of a stream. */
  stored(log: EventLog, streamId: string): Promise<string[]>;
  /** Rewrites one stored `data` text. */
  tamper(log: EventLog, streamId: string, version: number, data: string): Promise<void>;
}

function sqliteBackend(): Backend {
  const path = join(dir, `log-${randomBytes(4).toString("hex")}.db`);
  const raw = () => new Database(path);
  return {
    name: "SQLite",
    open: (encryption, retention) => createSqliteEventLog({ path, ...(encryption ? { encryption } : {}), ...(retention ? { retention } : {}) }),
    opened: async (encryption) => createSqliteEventLog({ path, encryption }).close(),
    snapshot: async () =>
      [path, join(dir, `${basename(path, ".db")}.keys.db`)]
        .flatMap((file) => ["", "-wal", "-shm", "-journal"].map((suffix) => file + suffix))
        .map((file) => `${file}:${existsSync(file) ? readFileSync(file).toString("base64") : "absent"}`)
        .join("\n"),
    async dropKeyCheck() {
      const keys = new Database(join(dir, `${basename(path, ".db")}.keys.db`));
      try {
        return keys.prepare("DELETE FROM arbor_data_keys WHERE key_id = ?").run(KEY_CHECK_ID).changes > 0;
      } finally {
        keys.close();
      }
    },
    async stored(_log, streamId) {
      const db = raw();
      try {
        return db.prepare("SELECT data FROM events WHERE stream_id = ? ORDER BY version").pluck().all(streamId) as string[];
      } finally {
        db.close();
      }
    },
    async tamper(_log, streamId, version, data) {
      const db = raw();
      try {
        db.prepare("UPDATE events SET data = ? WHERE stream_id = ? AND version = ?").run(data, streamId, version);
      } finally {
        db.close();
      }
    },
  };
}

function pgBackend(): Backend {
  const schema = newSchema();
  keySchemas.push(`${schema}_keys`);
  const sql = async <T>(text: string, values: unknown[]): Promise<T[]> => {
    const client = await testClient();
    try {
      return (await client.query(text, values)).rows as T[];
    } finally {
      await client.end();
    }
  };
  return {
    name: "PostgreSQL",
    open: (encryption, retention) => createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2, ...(encryption ? { encryption } : {}), ...(retention ? { retention } : {}) }),
    opened: async (encryption) => (await openPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2, encryption })).close(),
    async snapshot() {
      const tables = await sql<{ name: string }>(
        "SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables WHERE table_schema IN ($1, $2) ORDER BY table_schema, table_name",
        [schema, `${schema}_keys`],
      );
      const parts: string[] = [];
      for (const { name } of tables) parts.push(`${name}: ${JSON.stringify(await sql(`SELECT * FROM ${name} ORDER BY 1`, []))}`);
      return parts.join("\n");
    },
    async dropKeyCheck() {
      return (await sql(`DELETE FROM "${schema}_keys".data_keys WHERE key_id = $1 RETURNING 1`, [KEY_CHECK_ID])).length > 0;
    },
    async stored(_log, streamId) {
      return (await sql<{ data: string }>(`SELECT data::text AS data FROM "${schema}".events WHERE stream_id = $1 ORDER BY version`, [streamId])).map((row) => row.data);
    },
    async tamper(_log, streamId, version, data) {
      await sql(`UPDATE "${schema}".events SET data = $1::json WHERE stream_id = $2 AND version = $3`, [data, streamId, version]);
    },
  };
}

for (const make of [sqliteBackend, pgBackend]) {
  describe(`encrypted ${make().name} log`, { timeout: 60_000 }, () => {
    it("seals session data at rest, reads and subscribes in clear, keeps the ids and the tenant in clear", async () => {
      const backend = make();
      const key = randomBytes(32);
      const log = backend.open({ key });
      try {
        await log.append("session-s1", [created("s1"), message("m1", "SECRET-ALPHA")]);
        await log.append("tombstone-x", [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }]);
        const stored = await backend.stored(log, "session-s1");
        expect(stored.join("")).not.toContain("SECRET-ALPHA");
        expect(stored.join("")).not.toContain("/secret/cwd");
        expect(JSON.parse(stored[0])).toMatchObject({ tenant: "acme" });
        // SQLite seals the durable events of an append in one batch: the first holds the ciphertext, the others refer to it (sealed-batch.ts).
        expect(Object.keys(JSON.parse(stored[1]))).toEqual(["$enc"]);
        expect((JSON.parse(stored[1]) as { $enc: string }).$enc).toMatch(backend.name === "SQLite" ? /^~1$/ : /^A/);
        // Streams that are not a session's stay in clear.
        expect((await backend.stored(log, "tombstone-x"))[0]).toBe('{"leafId":null,"fromLeafId":null}');
        const events = await log.readStream("session-s1");
        expect(events.map((event) => event.data)).toEqual([created("s1").data, message("m1", "SECRET-ALPHA").data]);
        expect((await log.readAll()).map((event) => event.type)).toEqual(["session.created", "entry.appended", "leaf.moved"]);
        const live = firstValueFrom(log.subscribe({ streamId: "session-s1" }).pipe(take(3), toArray()));
        await log.append("session-s1", [message("m2", "SECRET-BETA")]);
        expect(((await live)[2].data as { entry: { message: { content: string } } }).entry.message.content).toBe("SECRET-BETA");
        if (log.tenantIndex) expect((await log.readAll({ tenant: "acme" })).length).toBe(3);
      } finally {
        await log.close();
      }
    });

    it("the delete retention removes the sealed deltas of an ended, kept message (their messageId stays in clear)", async () => {
      const backend = make();
      const log = backend.open({ key: randomBytes(32) }, { endedMessageDeltas: "delete" });
      try {
        const delta = (messageId: string, text: string) => ({ type: "message.delta", data: { messageId, contentIndex: 0, kind: "text", delta: text } });
        await log.append("session-d1", [{ type: "message.started", data: { messageId: "m1", role: "assistant" } }, delta("m1", "DELTA-SECRET-1"), delta("m1", "DELTA-SECRET-2")]);
        await log.append("session-d1", [{ type: "message.started", data: { messageId: "m2", role: "assistant" } }, delta("m2", "open")]);
        expect((await backend.stored(log, "session-d1")).join("")).not.toContain("DELTA-SECRET");
        await log.append("session-d1", [{ type: "message.ended", data: { messageId: "m1", role: "assistant", stopReason: "stop", entryId: "e1" } }]);
        const events = await log.readStream("session-d1");
        expect(events.map((event) => event.type)).toEqual(["message.started", "message.started", "message.delta", "message.ended"]);
        expect(events[2].data).toMatchObject({ messageId: "m2", delta: "open" });
      } finally {
        await log.close();
      }
    });

    it("an idempotent retry of sealed events is a duplicate; another payload under the same eventId is refused", async () => {
      const backend = make();
      const log = backend.open({ key: randomBytes(32) });
      try {
        const first = await log.append("session-s2", [{ ...created("s2"), eventId: "e-1" }]);
        const again = await log.append("session-s2", [{ ...created("s2"), eventId: "e-1" }]);
        expect(again).toMatchObject({ duplicate: true, lastGlobalPosition: first.lastGlobalPosition });
        expect(again.events[0].data).toEqual(created("s2").data);
        await expect(log.append("session-s2", [{ ...created("other"), eventId: "e-1" }])).rejects.toMatchObject({ code: "EVENT_ID_REUSED" });
      } finally {
        await log.close();
      }
    });

    it("a ciphertext moved to another row, or altered, is EventCorruptError, never other data", async () => {
      const backend = make();
      const key = randomBytes(32);
      const log = backend.open({ key });
      await log.append("session-s3", [created("s3"), message("m1", "ONE"), message("m2", "TWO")]);
      const stored = await backend.stored(log, "session-s3");
      await log.close();
      await backend.tamper(log, "session-s3", 2, stored[2]);
      const reopened = backend.open({ key });
      try {
        await expect(reopened.readStream("session-s3")).rejects.toMatchObject({ code: "EVENT_CORRUPT" });
        // Altered ciphertext: a single record's, or (SQLite) the batch head's, which every member of the batch opens through.
        const sealedAt = backend.name === "SQLite" ? 1 : 2;
        await backend.tamper(log, "session-s3", 2, stored[1]);
        await backend.tamper(log, "session-s3", sealedAt, stored[sealedAt - 1].replace(/"\$enc":"\*?(.)/, (all, first: string) => all.slice(0, -1) + (first === "A" ? "B" : "A")));
        await expect(reopened.readStream("session-s3")).rejects.toMatchObject({ code: "EVENT_CORRUPT" });
      } finally {
        await reopened.close();
      }
    });

    it("rotation re-wraps every data key: the old key is then refused, the new one reads everything", async () => {
      const backend = make();
      const oldKey = randomBytes(32);
      const newKey = randomBytes(32);
      const log = backend.open({ key: oldKey });
      await log.append("session-r1", [created("r1"), message("m1", "ROT-1")]);
      await log.append("session-r2", [created("r2"), message("m1", "ROT-2")]);
      await log.close();
      // The new key alone is refused at open (the key check is under the old one): nothing is read, and no data key is created under it.
      await expect(backend.opened({ key: newKey })).rejects.toMatchObject({
        code: "ENCRYPTION_KEY_MISMATCH",
        details: { masterKeyId: createLocalKeyProvider(newKey).id, storedMasterKeyId: createLocalKeyProvider(oldKey).id },
      });
      const rotating = backend.open({ key: newKey, previousKeys: [oldKey] });
      expect(await rotating.encryption!.rotate()).toEqual({ rewrapped: 2, total: 2, masterKeyId: createLocalKeyProvider(newKey).id });
      expect(await rotating.encryption!.rotate()).toMatchObject({ rewrapped: 0, total: 2 });
      await rotating.close();
      const rotated = backend.open({ key: newKey });
      try {
        expect((await rotated.readStream("session-r2"))[1].data).toEqual(message("m1", "ROT-2").data);
      } finally {
        await rotated.close();
      }
      // The key check was re-wrapped with the rest: the old key is now the wrong one.
      await expect(backend.opened({ key: oldKey })).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH", details: { storedMasterKeyId: createLocalKeyProvider(newKey).id } });
    });

    it("another master key is refused at open (EncryptionKeyMismatchError naming the log) and writes nothing; the right key reads every session", async () => {
      const backend = make();
      const right = randomBytes(32);
      const wrong = randomBytes(32);
      const log = backend.open({ key: right });
      await log.append("session-w1", [created("w1"), message("m1", "WRONG-KEY-1")]);
      await log.append("session-w2", [created("w2"), message("m1", "WRONG-KEY-2")]);
      await log.close();
      const before = await backend.snapshot();
      const refused = backend.opened({ key: wrong });
      await expect(refused).rejects.toMatchObject({
        code: "ENCRYPTION_KEY_MISMATCH",
        name: "EncryptionKeyMismatchError",
        details: { masterKeyId: createLocalKeyProvider(wrong).id, storedMasterKeyId: createLocalKeyProvider(right).id },
      });
      await expect(refused).rejects.toThrow(backend.name === "SQLite" ? /log "\/.*\.db" was written with another master key/ : /log schema "[^"]+" at .* was written with another master key/);
      if (backend.name === "PostgreSQL") {
        // createPostgresEventLog returns at once: every operation waits for the check and fails with it, writing nothing.
        const lazy = backend.open({ key: wrong });
        await expect(lazy.append("session-w3", [created("w3")])).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        await expect(lazy.append("task-w3", [{ type: "task.released", data: { taskId: "w3", attempt: 1, reason: "x" } }])).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        await expect(lazy.deleteStream("session-w1")).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        await expect(lazy.readStream("session-w1")).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH" });
        await lazy.close();
      }
      expect(await backend.snapshot()).toBe(before);

      const reader = backend.open({ key: right });
      try {
        expect((await reader.readStream("session-w1"))[1].data).toEqual(message("m1", "WRONG-KEY-1").data);
        expect((await reader.readStream("session-w2"))[1].data).toEqual(message("m1", "WRONG-KEY-2").data);
      } finally {
        await reader.close();
      }
    });

    it("a key store written before the key check: another key is refused by its data keys, the right one opens and writes the check", async () => {
      const backend = make();
      const right = randomBytes(32);
      const log = backend.open({ key: right });
      await log.append("session-l1", [created("l1"), message("m1", "LEGACY-1")]);
      await log.close();
      expect(await backend.dropKeyCheck()).toBe(true);
      const before = await backend.snapshot();
      await expect(backend.opened({ key: randomBytes(32) })).rejects.toMatchObject({ code: "ENCRYPTION_KEY_MISMATCH", details: { storedMasterKeyId: createLocalKeyProvider(right).id } });
      expect(await backend.snapshot()).toBe(before);
      await backend.opened({ key: right });
      expect(await backend.dropKeyCheck()).toBe(true);
      // Opened mid-rotation (a new key, the store's in previousKeys): the check is written under the store's key, which alone still opens it.
      await backend.opened({ key: randomBytes(32), previousKeys: [right] });
      await backend.opened({ key: right });
      const reader = backend.open({ key: right });
      try {
        expect((await reader.readStream("session-l1"))[1].data).toEqual(message("m1", "LEGACY-1").data);
      } finally {
        await reader.close();
      }
    });

    it("an asynchronous (KMS) key provider: one unwrap per session, then cached", async () => {
      const backend = make();
      const key = randomBytes(32);
      const writer = backend.open({ provider: asyncProvider("kms:test", key) });
      await Promise.all([writer.append("session-k1", [created("k1"), message("m1", "KMS-1")]), writer.append("session-k2", [created("k2")]), writer.append("session-k1", [message("m2", "KMS-2")])]);
      expect((await writer.readStream("session-k1")).map((event) => event.version)).toEqual([1, 2, 3]);
      await writer.close();
      const provider = asyncProvider("kms:test", key);
      const reader = backend.open({ provider });
      try {
        const repository = createSessionRepository({ log: reader });
        const view = (await repository.open("k1")).view;
        expect(JSON.stringify(view.getEntries())).toContain("KMS-2");
        await reader.readStream("session-k1");
        // One unwrap for the key check at open, one for the session.
        expect(provider.calls).toBe(2);
      } finally {
        await reader.close();
      }
    });

    it("memory values are sealed in the projection and searched after opening; summaries, chunks and heads hold no plaintext", async () => {
      const backend = make();
      const key = randomBytes(32);
      const log = backend.open({ key });
      try {
        await log.memoryIndex!.apply("acme", "session-m1", [{ version: 2, key: "favourite", value: { colour: "SECRET-TEAL" } }], 2);
        expect(await log.memoryIndex!.get("acme", "session-m1", "favourite")).toMatchObject({ value: { colour: "SECRET-TEAL" } });
        expect((await log.memoryIndex!.search("acme", "session-m1", "secret-te", 5)).map((row) => row.key)).toEqual(["favourite"]);
        expect(await log.memoryIndex!.search("acme", "session-m1", "purple", 5)).toEqual([]);
        expect(log.sessionSummaries).toBeUndefined();
        const repository = createSessionRepository({ log });
        const session = await repository.create({ id: "h1", cwd: "/w" });
        await session.appendEntry({ type: "session_info", name: "SECRET-TITLE" });
        expect((await repository.list()).find((row) => row.id === "h1")?.name).toBe("SECRET-TITLE");
        const blob = Buffer.from("a workspace file");
        const hash = createHash("sha256").update(blob).digest("hex");
        expect(await log.workspaceBlobs!.put("acme", [{ hash, data: blob }])).toBeGreaterThan(0);
        expect(await log.workspaceBlobs!.get("acme", hash)).toEqual(blob);
        expect((await log.workspaceBlobs!.list("acme")).map((row) => row.hash)).toEqual([hash]);
        await expect(log.workspaceBlobs!.get("other", hash)).rejects.toMatchObject({ code: "WORKSPACE_BLOB_INVALID" });
      } finally {
        await log.close();
      }
    });
  });
}

describe("encrypted SQLite file", () => {
  it("a sealed workspace blob moved to another name, or read with another master key, is refused, never other bytes", async () => {
    const path = join(dir, "blobs.db");
    const key = randomBytes(32);
    const log = createSqliteEventLog({ path, encryption: { key } });
    const first = Buffer.from("first file");
    const second = Buffer.from("second file");
    const name = (data: Buffer) => createHash("sha256").update(data).digest("hex");
    await log.workspaceBlobs!.put("acme", [{ hash: name(first), data: first }, { hash: name(second), data: second }]);
    await log.close();
    const db = new Database(path);
    const stored = db.prepare("SELECT data FROM workspace_blobs WHERE hash = ?").pluck();
    db.prepare("UPDATE workspace_blobs SET data = ? WHERE hash = ?").run(stored.get(name(first)), name(second));
    db.close();
    const reopened = createSqliteEventLog({ path, encryption: { key } });
    expect(await reopened.workspaceBlobs!.get("acme", name(first))).toEqual(first);
    await expect(reopened.workspaceBlobs!.get("acme", name(second))).rejects.toMatchObject({ code: "WORKSPACE_BLOB_INVALID" });
    await reopened.close();
    expect(() => createSqliteEventLog({ path, encryption: { key: randomBytes(32) } })).toThrow(expect.objectContaining({ code: "ENCRYPTION_KEY_MISMATCH" }));
    const again = createSqliteEventLog({ path, encryption: { key } });
    // The tenant's workspace key id cannot be taken by a session id, nor destroyed by a delete of such a stream.
    await expect(again.append("session-\u0001workspace\u0001acme", [created("x")])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await again.deleteStream("session-\u0001workspace\u0001acme");
    expect(await again.workspaceBlobs!.get("acme", name(first))).toEqual(first);
    await again.close();
  });
  it("no table of the file holds a session's text: summaries, context chunks, heads, memory FTS", async () => {
    const path = join(dir, "projections.db");
    const log = createSqliteEventLog({ path, encryption: { key: randomBytes(32) } });
    const repository = createSessionRepository({ log });
    const session = await repository.create({ id: "p1", cwd: "/w" });
    await session.appendEntry({ type: "session_info", name: "TITLE-PLAIN-0d1f" });
    // One entry per append past a block (256 entries): context chunks are built from stored (sealed) events, then merged.
    for (let index = 0; index < 300; index++) await session.appendEntry({ type: "message", message: { role: "user", content: `TEXT-PLAIN-77ab ${index}`, timestamp: 1 } } as never);
    await log.memoryIndex!.apply("default", "session-p1", [{ version: 9, key: "k", value: "MEMORY-PLAIN-5e5e" }], 9);
    const chunks = log.sessionIndex!.contextChunks!("session-p1", 0, 300);
    expect(chunks.map((chunk) => [chunk.from, chunk.to])).toEqual([[0, 255], [256, 271], [272, 287]]);
    expect(chunks[1].text()!.items).toContain("TEXT-PLAIN-77ab 255");
    const context = (await repository.open("p1")).view.buildContext();
    expect(context.messages.map((item) => (item as { content: string }).content)).toEqual(Array.from({ length: 300 }, (_, index) => `TEXT-PLAIN-77ab ${index}`));
    await log.close();
    const bytes = fileBytes(path);
    for (const text of ["TITLE-PLAIN-0d1f", "TEXT-PLAIN-77ab", "MEMORY-PLAIN-5e5e"]) expect(bytes).not.toContain(text);
    // The sealed chunk texts are raw bytes (BLOB values), not base64 text.
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT DISTINCT typeof(ids) || ',' || typeof(items) FROM arbor_context_chunks").pluck().all()).toEqual(["blob,blob"]);
    raw.close();
    expect(() => createSqliteEventLog({ path, encryption: { key: randomBytes(32) } })).toThrow(expect.objectContaining({ code: "ENCRYPTION_KEY_MISMATCH" }));
  });
});

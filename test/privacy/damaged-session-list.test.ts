/**
 * A damaged encrypted session never breaks another tenant's session list, and is never named to it. On a real encrypted SQLite file, tenant B's
 * sessions get one bit flipped: in a sealed batch's ciphertext, in a single sealed record, and in the sealed `session.created` of a third (whose
 * tenant then cannot be trusted). Tenant A's list (the library, scoped or filtered, and `GET /api/sessions` over real HTTP) is exactly as before
 * and mentions none of B's ids; B's own list is 200 with its intact session as ever and the two damaged ones marked `damaged` (`EVENT_CORRUPT`);
 * the session whose tenant cannot be verified is in no tenant's list, only in the unfiltered (admin) one. On real PostgreSQL (sealed per record,
 * listed by its tenant column) a flipped bit in one record is the same marked row for its owner and nothing for the other tenant.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import type { NewEntry } from "../../src/store/session-types.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { flipBitInSealedBatch, flipBitInSealedRecord, sealedLayout } from "./sealed-damage.ts";

const dir = tempDir("arbor-damaged-list-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const nextSchema = useTestSchemas("damaged");
const TOKENS: Record<string, string> = { "token-a": "a", "token-b": "b" };
const BATCH = "b-batch-5d1e9a";
const RECORD = "b-record-77c0f2";
const FIRST = "b-first-0a93bd";
const message = (text: string, timestamp: number): NewEntry => ({ type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp } });

describe("a damaged encrypted session in session lists", () => {
  it("is listed, marked, to its own tenant only; every other list is as before and never names it", async () => {
    const path = join(dir, "arbor.db");
    const encryption = { key: randomBytes(32) };
    const writer = createSqliteEventLog({ path, encryption });
    const repository = createSessionRepository({ log: writer });
    for (const [id, tenant] of [["a-one", "a"], ["a-two", "a"], ["b-intact", "b"], [BATCH, "b"], [RECORD, "b"], [FIRST, "b"]] as const) {
      const session = await repository.create({ id, cwd: dir, tenant });
      // One append of three entries: a sealed batch (its head at version 2); then one entry alone: a single sealed record (version 5).
      await session.appendEntries([message(`${id} first`, 1_000), message(`${id} second`, 1_001), message(`${id} third`, 1_002)]);
      await session.appendEntry(message(`${id} last`, 1_003));
    }
    await writer.close();
    expect(sealedLayout(path, `session-${BATCH}`)).toEqual({ heads: [2], records: [1, 5] });
    flipBitInSealedBatch(path, `session-${BATCH}`, 2);
    flipBitInSealedRecord(path, `session-${RECORD}`, 5);
    flipBitInSealedRecord(path, `session-${FIRST}`, 1);

    const opened = createSqliteEventLog({ path, encryption, readOnly: true });
    // Every stream a read reaches: another tenant's streams must be passed over before any of their data is read (and decrypted).
    const read = new Set<string>();
    const log: EventLog = { ...opened, readStream: (streamId, options) => (read.add(streamId), opened.readStream(streamId, options)) };
    const damagedIds = [BATCH, RECORD, FIRST];
    const mentionsDamaged = (value: unknown) => damagedIds.some((id) => JSON.stringify(value).includes(id));
    try {
      const admin = createSessionRepository({ log });
      const scopedA = createSessionRepository({ log, tenant: "a" });
      const scopedB = createSessionRepository({ log, tenant: "b" });
      const listsOfA = [await scopedA.list(), await admin.list({ tenant: "a" }), await scopedA.list({ stats: true })];
      expect([...read].filter((streamId) => !streamId.startsWith("session-a-"))).toEqual([]);
      for (const list of listsOfA) {
        expect(list.map((row) => row.id).sort()).toEqual(["a-one", "a-two"]);
        expect(list.every((row) => row.damaged === undefined && row.messageCount === 4)).toBe(true);
        expect(mentionsDamaged(list)).toBe(false);
      }

      for (const list of [await scopedB.list(), await admin.list({ tenant: "b" })]) {
        expect(list.map((row) => row.id).sort()).toEqual([BATCH, RECORD, "b-intact"].sort());
        const byId = new Map(list.map((row) => [row.id, row]));
        expect(byId.get("b-intact")).toMatchObject({ tenant: "b", messageCount: 4, firstMessage: "b-intact first" });
        expect(byId.get("b-intact")!.damaged).toBeUndefined();
        for (const id of [BATCH, RECORD]) {
          expect(byId.get(id)).toMatchObject({ tenant: "b", messageCount: 0, firstMessage: "(damaged)", damaged: { code: "EVENT_CORRUPT" } });
          expect(byId.get(id)!.damaged!.message).toContain(`session-${id}`);
        }
        // Its first event does not authenticate, so neither does the tenant stored beside it: in no tenant's list.
        expect(list.some((row) => row.id === FIRST)).toBe(false);
      }
      const everything = await admin.list();
      expect(everything.filter((row) => row.damaged).map((row) => row.id).sort()).toEqual([...damagedIds].sort());

      // Over HTTP: a repository of every tenant, each request's list filtered to its tenant.
      const server = await startChatServer({ handler: createChatHandler({ repository: admin, cwd: dir, authenticate: (request) => TOKENS[(request.headers.get("authorization") ?? "").replace(/^Bearer /, "")] }) });
      try {
        const list = async (token: string) => {
          const response = await fetch(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
          const text = await response.text();
          return { status: response.status, text, sessions: (JSON.parse(text) as { sessions: { id: string; damaged?: { code: string } }[] }).sessions };
        };
        const a = await list("token-a");
        expect(a.status, a.text).toBe(200);
        expect(a.sessions.map((row) => row.id).sort()).toEqual(["a-one", "a-two"]);
        expect(mentionsDamaged(a.text)).toBe(false);
        const b = await list("token-b");
        expect(b.status, b.text).toBe(200);
        expect(b.sessions.filter((row) => row.damaged?.code === "EVENT_CORRUPT").map((row) => row.id).sort()).toEqual([BATCH, RECORD].sort());
        expect(b.sessions.map((row) => row.id)).toContain("b-intact");
        expect(b.text).not.toContain(FIRST);
      } finally {
        await server.close();
      }
    } finally {
      await opened.close();
    }
  }, 60_000);

  it("on PostgreSQL (sealed per record): the owner's list marks it, another tenant's list is as before", async () => {
    const schema = nextSchema();
    const encryption = { key: randomBytes(32) };
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, encryption });
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const repository = createSessionRepository({ log });
      for (const [id, tenant] of [["a-one", "a"], ["b-intact", "b"], [RECORD, "b"]] as const) {
        const session = await repository.create({ id, cwd: dir, tenant });
        await session.appendEntries([message(`${id} first`, 1_000), message(`${id} second`, 1_001)]);
      }
      const { rows } = await client.query<{ data: string }>(`SELECT data::text AS data FROM "${schema}".events WHERE stream_id = $1 AND version = 2`, [`session-${RECORD}`]);
      const sealed = /^\{"\$enc":"([A-Za-z0-9+/=]+)"/.exec(rows[0]!.data)![1];
      const bytes = Buffer.from(sealed, "base64");
      bytes[20] ^= 0x04;
      await client.query(`UPDATE "${schema}".events SET data = $1::json WHERE stream_id = $2 AND version = 2`, [rows[0]!.data.replace(sealed, bytes.toString("base64")), `session-${RECORD}`]);

      const a = await createSessionRepository({ log, tenant: "a" }).list();
      expect(a.map((row) => row.id)).toEqual(["a-one"]);
      expect(JSON.stringify(a)).not.toContain(RECORD);
      const b = await createSessionRepository({ log, tenant: "b" }).list();
      expect(b.map((row) => row.id).sort()).toEqual([RECORD, "b-intact"].sort());
      expect(b.find((row) => row.id === RECORD)).toMatchObject({ tenant: "b", damaged: { code: "EVENT_CORRUPT" } });
      expect(b.find((row) => row.id === "b-intact")?.damaged).toBeUndefined();
    } finally {
      await client.end();
      await log.close();
    }
  }, 60_000);
});

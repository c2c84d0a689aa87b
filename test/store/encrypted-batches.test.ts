/**
 * Sealed batches of the encrypted SQLite log (`src/store/crypto/sealed-batch.ts`): the durable events of one append are sealed in one AES-GCM
 * operation, deltas alone; every event still reads back alone, through every read path; rows sealed alone (a one-event append, a file written
 * before batches) read beside batched ones; a batch's head altered, a member moved, edited or left without its head is EventCorruptError, never
 * other data; the delta retention deletes deltas' ciphertext with their rows; a delete leaves nothing readable. Real SQLite files.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_BATCH_EVENTS } from "../../src/store/crypto/sealed-batch.ts";
import { openData } from "../../src/store/crypto/sealed-record.ts";
import { toStoredEvent } from "../../src/store/log/log-decode.ts";
import { checkSqliteLogFile } from "../../src/store/sqlite/sqlite-integrity.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { tempDir } from "../cli/cli-helpers.ts";

const dir = tempDir("arbor-encrypted-batches-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const created = (sessionId: string) => ({ type: "session.created", data: { sessionId, cwd: "/secret/cwd", createdAt: "2026-12-07T00:00:00.000Z", tenant: "acme" } });
const entry = (id: string, text: string, parentId: string | null = null) => ({
  type: "entry.appended",
  data: { entry: { type: "message", id, parentId, timestamp: "2026-12-07T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } } },
});
const fileText = (path: string) => ["", "-wal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1")).join("");

function storedRows(path: string, streamId: string): { version: number; data: string }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT version, data FROM events WHERE stream_id = ? ORDER BY version").all(streamId) as { version: number; data: string }[];
  } finally {
    db.close();
  }
}

function sealedRows(path: string, streamId: string): { version: number; sealed: Buffer }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare("SELECT e.version AS version, b.sealed AS sealed FROM arbor_sealed_batches b JOIN events e ON e.global_position = b.position WHERE e.stream_id = ? ORDER BY e.version")
      .all(streamId) as { version: number; sealed: Buffer }[];
  } finally {
    db.close();
  }
}

function tamperSealed(path: string, streamId: string, version: number, sealed: Buffer | undefined): void {
  const db = new Database(path);
  try {
    const position = db.prepare("SELECT global_position FROM events WHERE stream_id = ? AND version = ?").pluck().get(streamId, version);
    if (sealed === undefined) db.prepare("DELETE FROM arbor_sealed_batches WHERE position = ?").run(position);
    else db.prepare("INSERT OR REPLACE INTO arbor_sealed_batches (position, sealed) VALUES (?, ?)").run(position, sealed);
  } finally {
    db.close();
  }
}

function tamper(path: string, streamId: string, version: number, data: string | undefined): void {
  const db = new Database(path);
  try {
    if (data === undefined) db.prepare("DELETE FROM events WHERE stream_id = ? AND version = ?").run(streamId, version);
    else db.prepare("UPDATE events SET data = ? WHERE stream_id = ? AND version = ?").run(data, streamId, version);
  } finally {
    db.close();
  }
}

describe("sealed batches (encrypted SQLite log)", () => {
  it("seals an append's durable events once, deltas alone, and reads every event back alone and in ranges", async () => {
    const path = join(dir, "batches.db");
    const key = randomBytes(32);
    const log = createSqliteEventLog({ path, encryption: { key } });
    const texts = Array.from({ length: MAX_BATCH_EVENTS + 20 }, (_, index) => `SECRET-${index}-${"x".repeat(index % 7)}`);
    try {
      await log.append("session-b1", [created("b1"), entry("e0", texts[0])]);
      // A one-event append is sealed alone.
      await log.append("session-b1", [entry("alone", "SECRET-ALONE", "e0")]);
      // More events than one batch holds, with deltas in between: two batches, the deltas alone.
      const big = texts.slice(1).flatMap((text, index) => {
        const events: { type: string; data: unknown }[] = [entry(`e${index + 1}`, text, index === 0 ? "alone" : `e${index}`)];
        if (index % 50 === 0) events.push({ type: "message.delta", data: { messageId: `m${index}`, kind: "text", contentIndex: 0, delta: `DELTA-${index}` } });
        return events;
      });
      await log.append("session-b1", big);
      const rows = storedRows(path, "session-b1");
      // A batch's head is "*" (its ciphertext is in arbor_sealed_batches), its members "~<offset>"; single records are base64.
      const kinds = rows.map((row) => ({ "*": "head", "~": "member" })[(JSON.parse(row.data) as { $enc: string }).$enc[0]] ?? "alone");
      expect(sealedRows(path, "session-b1").map((row) => row.version)).toEqual(rows.filter((_row, index) => kinds[index] === "head").map((row) => row.version));
      expect(kinds.slice(0, 3)).toEqual(["head", "member", "alone"]);
      expect(kinds.filter((kind) => kind === "head")).toHaveLength(3);
      const deltaRows = rows.filter((_row, index) => kinds[index] === "alone").length;
      expect(deltaRows).toBe(1 + Math.ceil((texts.length - 1) / 50));
      expect(fileText(path)).not.toMatch(/SECRET-|DELTA-/);

      const events = await log.readStream("session-b1");
      const entryTexts = events.filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { message: { content: string } } }).entry.message.content);
      expect(entryTexts).toEqual([texts[0], "SECRET-ALONE", ...texts.slice(1)]);
      // Any one event of a batch opens alone, from either end of the stream.
      for (const version of [2, 5, 150, events.length]) {
        const [one] = await log.readStream("session-b1", { fromVersion: version, limit: 1 });
        expect(one).toEqual(events[version - 1]);
        const [back] = await log.readStream("session-b1", { fromVersion: version, direction: "backwards", limit: 1 });
        expect(back).toEqual(events[version - 1]);
      }
      expect((await log.readAll({ fromPosition: events[200].globalPosition, limit: 3 })).map((event) => event.eventId)).toEqual(events.slice(201, 204).map((event) => event.eventId));
    } finally {
      await log.close();
    }
    // A new process (a new cipher, no cache) opens the session through its index and context.
    const reopened = createSqliteEventLog({ path, encryption: { key } });
    try {
      const session = await createSessionRepository({ log: reopened }).open("b1");
      const context = session.view.buildContext();
      expect(context.messages).toHaveLength(texts.length + 1);
      expect(context.messages.at(-1)).toMatchObject({ content: texts.at(-1) });
    } finally {
      await reopened.close();
    }
  });

  it("a batch's head altered, a member moved or edited, or a member without its head is EventCorruptError, never other data", async () => {
    const path = join(dir, "tamper.db");
    const key = randomBytes(32);
    const log = createSqliteEventLog({ path, encryption: { key } });
    await log.append("session-t1", [created("t1"), entry("a", "ONE"), entry("b", "TWO", "a"), entry("c", "THREE", "b")]);
    await log.append("session-t1", [entry("d", "FOUR", "c"), entry("e", "FIVE", "d")]);
    await log.close();
    const rows = storedRows(path, "session-t1");
    const sealed = sealedRows(path, "session-t1");
    expect(sealed.map((row) => row.version)).toEqual([1, 5]);
    const restore = () => {
      rows.forEach((row) => tamper(path, "session-t1", row.version, row.data));
      sealed.forEach((row) => tamperSealed(path, "session-t1", row.version, row.sealed));
    };
    const corrupt = async (version: number) => {
      const reopened = createSqliteEventLog({ path, encryption: { key } });
      try {
        await expect(reopened.readStream("session-t1", { fromVersion: version, limit: 1 })).rejects.toMatchObject({ code: "EVENT_CORRUPT", details: { streamId: "session-t1" } });
      } finally {
        await reopened.close();
      }
    };
    // One ciphertext byte of the first batch flipped: its head and every member refuse.
    const flipped = Buffer.from(sealed[0].sealed);
    flipped[flipped.length - 20] ^= 1;
    tamperSealed(path, "session-t1", 1, flipped);
    await corrupt(1);
    await corrupt(3);
    restore();
    // A member moved to another member's row (same type), or another batch's: its offset points at no head, or at a batch without it.
    tamper(path, "session-t1", 3, rows[3].data);
    await corrupt(3);
    tamper(path, "session-t1", 3, rows[5].data);
    await corrupt(3);
    restore();
    // The second batch's ciphertext moved to the first's head: it is bound to its own head's event id.
    tamperSealed(path, "session-t1", 1, sealed[1].sealed);
    await corrupt(1);
    await corrupt(2);
    restore();
    // A batch's ciphertext gone: its events refuse, naming it, and arbor doctor's check reports the head.
    tamperSealed(path, "session-t1", 1, undefined);
    await corrupt(2);
    expect(checkSqliteLogFile(path).problems).toEqual([`${path}: stream "session-t1" version 1 heads a sealed batch whose ciphertext is missing: the events of that batch cannot be read.`]);
    restore();
    expect(checkSqliteLogFile(path)).toMatchObject({ ok: true, problems: [] });
    // A member's clear part edited (it has none to have: any addition is refused).
    tamper(path, "session-t1", 2, rows[1].data.replace(/}$/, ',"tenant":"evil"}'));
    await corrupt(2);
    restore();
    // The head deleted: its members cannot open, and say so.
    tamper(path, "session-t1", 5, undefined);
    const reopened = createSqliteEventLog({ path, encryption: { key } });
    try {
      await expect(reopened.readStream("session-t1", { fromVersion: 6, limit: 1 })).rejects.toMatchObject({ code: "EVENT_CORRUPT", message: expect.stringContaining("head of its sealed batch") });
      // The untouched batch still reads.
      expect((await reopened.readStream("session-t1", { limit: 4 })).map((event) => event.version)).toEqual([1, 2, 3, 4]);
    } finally {
      await reopened.close();
    }
  });

  it("a reader that knows only single records (an earlier Arbor) refuses a batch's rows as corrupt, and a reader without the key as encrypted", async () => {
    const path = join(dir, "earlier.db");
    const log = createSqliteEventLog({ path, encryption: { key: randomBytes(32) } });
    await log.append("session-o1", [created("o1"), entry("a", "OLD-READER")]);
    await log.close();
    const db = new Database(path, { readonly: true });
    const rows = db
      .prepare("SELECT global_position AS globalPosition, event_id AS eventId, stream_id AS streamId, version, type, schema_version AS schemaVersion, time, data AS dataJson, metadata AS metadataJson FROM events ORDER BY version")
      .all() as Parameters<typeof toStoredEvent>[0][];
    db.close();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      // Whatever the key: the single-record opener finds no record of its format.
      expect(() => openData(randomBytes(32), row, row.dataJson)).toThrow(expect.objectContaining({ code: "EVENT_CORRUPT" }));
      expect(() => toStoredEvent(row)).toThrow(expect.objectContaining({ code: "DATA_KEY_UNAVAILABLE" }));
    }
  });

  it("the delta retention deletes the deltas' ciphertext; a session delete leaves none of its text readable in the file", async () => {
    const path = join(dir, "retention.db");
    const key = randomBytes(32);
    const log = createSqliteEventLog({ path, encryption: { key }, retention: { endedMessageDeltas: "delete" } });
    try {
      await log.append("session-r1", [created("r1")]);
      await log.append("session-r1", [
        { type: "message.started", data: { messageId: "m1", role: "assistant" } },
        { type: "message.delta", data: { messageId: "m1", kind: "text", contentIndex: 0, delta: "DELTA-TEXT" } },
        { type: "message.delta", data: { messageId: "m1", kind: "text", contentIndex: 0, delta: "MORE" } },
      ]);
      const before = storedRows(path, "session-r1").length;
      await log.append("session-r1", [entry("x", "ENTRY-TEXT"), { type: "message.ended", data: { messageId: "m1", role: "assistant", entryId: "x" } }]);
      const after = storedRows(path, "session-r1");
      expect(after.length).toBe(before + 2 - 2);
      expect((await log.readStream("session-r1")).map((event) => event.type)).toEqual(["session.created", "message.started", "entry.appended", "message.ended"]);
      expect(sealedRows(path, "session-r1")).toHaveLength(1);
      await log.deleteStream("session-r1");
      expect(storedRows(path, "session-r1")).toEqual([]);
      expect(sealedRows(path, "session-r1")).toEqual([]);
      await expect(log.readStream("session-r1")).resolves.toEqual([]);
    } finally {
      await log.close();
    }
  });
});

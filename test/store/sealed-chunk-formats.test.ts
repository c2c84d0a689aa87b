/**
 * The stored forms of an encrypted log's context chunks (`sqlite-context-chunks.ts`): a chunk written now seals `ids` and `items` together in
 * `items` (one operation to open), with `ids` an empty BLOB; rows written before, sealed one column each, read as they are. A cipher stand-in
 * that tags each text with its purpose shows which purpose each form is opened with (the real AEAD is `sealed-record.ts`'s, tested elsewhere).
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { LogCipher } from "../../src/store/crypto/log-cipher.ts";
import { createSqliteContextChunks } from "../../src/store/sqlite/sqlite-context-chunks.ts";

const STREAM = "session-s1";
/** Seals as `<purpose>\0<text>` bytes; opens only bytes of the same stream's purpose. */
const cipher: Pick<LogCipher, "open" | "sealTextBytes" | "openText"> = {
  open: (record) => record,
  sealTextBytes: (streamId, purpose, text) => Buffer.from(`${streamId}|${purpose}\0${text}`),
  openText(streamId, purpose, text) {
    const stored = typeof text === "string" ? text : text.toString("utf8");
    const prefix = `${streamId}|${purpose}\0`;
    if (!stored.startsWith(prefix)) throw new Error(`opened with the wrong purpose: ${purpose}`);
    return stored.slice(prefix.length);
  },
};

function database() {
  const db = new Database(":memory:");
  db.exec(`CREATE TABLE events (stream_id TEXT, version INTEGER, event_id TEXT, type TEXT, schema_version INTEGER, data TEXT);
    CREATE TABLE arbor_entry_index (stream_id TEXT, seq INTEGER, version INTEGER);
    INSERT INTO events VALUES ('${STREAM}', 1, 'first', 'session.created', 1, '{}');`);
  return db;
}

describe("sealed context chunk forms", () => {
  it("reads a chunk sealed as one text and a chunk sealed one column each", () => {
    const db = database();
    const chunks = createSqliteContextChunks(db, { writable: true, cipher })!;
    const insert = db.prepare("INSERT INTO arbor_context_chunks (stream_id, first_event_id, from_seq, to_seq, kinds, ids, items) VALUES (?, 'first', ?, ?, ?, ?, ?)");
    const kinds = "m".repeat(16);
    const ids = (from: number) => JSON.stringify(Array.from({ length: 16 }, (_, index) => `e${from + index}`));
    const items = (from: number) => JSON.stringify(Array.from({ length: 16 }, (_, index) => ({ role: "user", content: `line\nof ${from + index}`, timestamp: 1 })));
    // The current form: both texts in `items`, `ids` an empty BLOB.
    insert.run(STREAM, 0, 15, kinds, Buffer.alloc(0), cipher.sealTextBytes(STREAM, "chunk 0-15 text", `${ids(0)}\n${items(0)}`));
    // The form before: each column sealed with its own purpose.
    insert.run(STREAM, 16, 31, kinds, cipher.sealTextBytes(STREAM, "chunk 16-31 ids", ids(16)), cipher.sealTextBytes(STREAM, "chunk 16-31 items", items(16)));
    const read = chunks.read(STREAM, 0, 31);
    expect(read.map((chunk) => [chunk.from, chunk.to])).toEqual([[0, 15], [16, 31]]);
    expect(read.map((chunk) => chunk.text())).toEqual([
      { kinds, ids: ids(0), items: items(0) },
      { kinds, ids: ids(16), items: items(16) },
    ]);
    db.close();
  });
});

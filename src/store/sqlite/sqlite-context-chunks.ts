/**
 * The SQLite log's stored context text (ours; the format is `context-chunks.ts`), in `arbor_context_chunks` beside the session index. Chunks are
 * written only by the index's writer hooks inside the append's transaction: every {@link CHUNK_ENTRIES} entries a chunk, every
 * {@link BLOCK_ENTRIES} the block's chunks merged into one; the last incomplete chunk is not covered, and an unparsable entry leaves its chunk out.
 * Only chunks of the stream's current first event are read. On an encrypted log a chunk's `ids` and `items` are sealed together, as raw bytes in
 * `items` (one AEAD operation per chunk read), with `ids` an empty BLOB; rows sealed one column each, as bytes or as base64 text, read as they are.
 */
import type Database from "better-sqlite3";
import type { SessionEntry } from "../../core/entries.ts";
import { BLOCK_ENTRIES, CHUNK_ENTRIES, encodeChunk, mergeChunks, type ChunkText } from "../session/context-chunks.ts";
import type { ContextChunkText, StoredContextChunk } from "../session/session-index.ts";
import type { LogCipher } from "../crypto/log-cipher.ts";
import { ignored } from "../../core/ignored.ts";
import { hasTables } from "./sqlite-tables.ts";

const TABLE = `
  CREATE TABLE IF NOT EXISTS arbor_context_chunks (
    stream_id TEXT NOT NULL,
    first_event_id TEXT NOT NULL,
    from_seq INTEGER NOT NULL,
    to_seq INTEGER NOT NULL,
    kinds TEXT NOT NULL,
    ids TEXT NOT NULL,
    items TEXT NOT NULL,
    PRIMARY KEY (stream_id, from_seq)
  );
`;

const COLUMNS = 'from_seq AS "from", to_seq AS "to", kinds, ids, items';

type ChunkRow = ContextChunkText & { from: number; to: number };

/** The chunk statements of one connection. */
export interface SqliteContextChunks {
  /**
   * The entry at `seq` of `streamId` was just indexed (inside the append's transaction); `recent` holds the entries indexed by the same call, the
   * last at `seq` (read from there instead of the stored events).
   */
  indexed(streamId: string, firstEventId: string, seq: number, recent: readonly SessionEntry[]): void;
  /** Deletes the stream's chunks (inside the delete's, or the restart's, transaction). */
  deleted(streamId: string): void;
  /** The chunks covering any seq of `from…to`, in seq order (their texts read on demand). */
  read(streamId: string, from: number, to: number): StoredContextChunk[];
}

/** The chunks of one SQLite connection, or undefined when the file has no chunk table and cannot get it (read-only). */
export function createSqliteContextChunks(
  db: Database.Database,
  options: { writable: boolean; cipher?: Pick<LogCipher, "open" | "sealTextBytes" | "openText"> },
): SqliteContextChunks | undefined {
  if (options.writable) db.exec(TABLE);
  else if (!hasTables(db, "arbor_context_chunks")) return undefined;

  const cipher = options.cipher;
  const selectEntryData = db
    .prepare(`SELECT e.data${cipher ? ", e.event_id, e.type, e.schema_version, e.version" : ""} FROM arbor_entry_index i JOIN events e ON e.stream_id = i.stream_id AND e.version = i.version WHERE i.stream_id = ? AND i.seq BETWEEN ? AND ? ORDER BY i.seq`)
    .raw();
  /** The stored data JSON of `selectEntryData`'s rows (opened on an encrypted log). */
  const entryTexts = (streamId: string, from: number, to: number): string[] =>
    (selectEntryData.all(streamId, from, to) as unknown[][]).map((row) =>
      cipher
        ? cipher.open({ streamId, globalPosition: 0, version: row[4] as number, time: "", metadataJson: "{}", dataJson: row[0] as string, eventId: row[1] as string, type: row[2] as string, schemaVersion: row[3] as number }).dataJson
        : (row[0] as string),
    );
  const purpose = (from: number, to: number, field: string) => `chunk ${from}-${to} ${field}`;
  /** A stored chunk's text in clear. */
  const openRow = <T extends ContextChunkText>(streamId: string, from: number, to: number, row: T): T => {
    if (!cipher) return row;
    const ids = row.ids as string | Buffer;
    if (typeof ids !== "string" && ids.length === 0) {
      // Sealed together: ids, a line break (no JSON text holds one raw), items.
      const both = cipher.openText(streamId, purpose(from, to, "text"), row.items as string | Buffer);
      const cut = both.indexOf("\n");
      return { ...row, ids: cut < 0 ? "" : both.slice(0, cut), items: cut < 0 ? "" : both.slice(cut + 1) };
    }
    return { ...row, ids: cipher.openText(streamId, purpose(from, to, "ids"), ids), items: cipher.openText(streamId, purpose(from, to, "items"), row.items as string | Buffer) };
  };
  const SEALED_TOGETHER = Buffer.alloc(0);
  const insert = db.prepare("INSERT OR REPLACE INTO arbor_context_chunks (stream_id, first_event_id, from_seq, to_seq, kinds, ids, items) VALUES (?, ?, ?, ?, ?, ?, ?)");
  // A chunk is never longer than BLOCK_ENTRIES, so the chunks that reach `from` start at most that far before it.
  const selectCovering = db.prepare(
    `SELECT from_seq AS "from", to_seq AS "to", first_event_id AS firstEventId FROM arbor_context_chunks WHERE stream_id = ? AND from_seq BETWEEN ? AND ? AND to_seq >= ? ORDER BY from_seq`,
  );
  const selectText = db.prepare("SELECT kinds, ids, items FROM arbor_context_chunks WHERE stream_id = ? AND from_seq = ? AND to_seq = ? AND first_event_id = ?");
  const selectWithin = db.prepare(`SELECT ${COLUMNS} FROM arbor_context_chunks WHERE stream_id = ? AND first_event_id = ? AND from_seq BETWEEN ? AND ? ORDER BY from_seq`);
  const selectFirstEventId = db.prepare("SELECT event_id FROM events WHERE stream_id = ? AND version = 1").pluck();
  const deleteWithin = db.prepare("DELETE FROM arbor_context_chunks WHERE stream_id = ? AND from_seq BETWEEN ? AND ?");
  const deleteAll = db.prepare("DELETE FROM arbor_context_chunks WHERE stream_id = ?");
  const deleteStale = db.prepare("DELETE FROM arbor_context_chunks WHERE stream_id = ? AND first_event_id <> ?");

  /** The chunk text of the entries `from…to` (the recent ones, else the stored ones), or undefined when one is missing or does not parse. */
  const fromEvents = (streamId: string, from: number, to: number, recent: readonly SessionEntry[]): ChunkText | undefined => {
    try {
      if (recent.length >= to - from + 1) return encodeChunk(recent.slice(recent.length - (to - from + 1)));
      const texts = entryTexts(streamId, from, to);
      return texts.length === to - from + 1 ? encodeChunk(texts.map((text) => (JSON.parse(text) as { entry: SessionEntry }).entry)) : undefined;
    } catch (error) {
      // Derived data never fails an append: an entry that does not encode leaves its chunk unwritten.
      if (error instanceof SyntaxError || error instanceof TypeError) return undefined;
      throw error;
    }
  };
  const write = (streamId: string, firstEventId: string, from: number, to: number, text: ChunkText | undefined) => {
    if (!text) return;
    const sealed = cipher?.sealTextBytes(streamId, purpose(from, to, "text"), `${text.ids}\n${text.items}`);
    if (sealed !== undefined && typeof sealed !== "string") insert.run(streamId, firstEventId, from, to, text.kinds, SEALED_TOGETHER, sealed);
    else insert.run(streamId, firstEventId, from, to, text.kinds, text.ids, text.items);
  };

  return {
    indexed(streamId, firstEventId, seq, recent) {
      if ((seq + 1) % CHUNK_ENTRIES !== 0) return;
      write(streamId, firstEventId, seq + 1 - CHUNK_ENTRIES, seq, fromEvents(streamId, seq + 1 - CHUNK_ENTRIES, seq, recent));
      if ((seq + 1) % BLOCK_ENTRIES !== 0) return;
      const from = seq + 1 - BLOCK_ENTRIES;
      const parts = (selectWithin.all(streamId, firstEventId, from, seq) as ChunkRow[]).map((part) => openRow(streamId, part.from, part.to, part));
      const tiles = parts.length > 0 && parts[0].from === from && parts[parts.length - 1].to === seq && parts.every((part, index) => index === 0 || part.from === parts[index - 1].to + 1);
      deleteWithin.run(streamId, from, seq);
      write(streamId, firstEventId, from, seq, tiles ? mergeChunks(parts) : fromEvents(streamId, from, seq, recent));
    },
    deleted(streamId) {
      deleteAll.run(streamId);
    },
    read(streamId, from, to) {
      const rows = selectCovering.all(streamId, Math.max(0, from - BLOCK_ENTRIES + 1), to, from) as { from: number; to: number; firstEventId: string }[];
      if (rows.length === 0) return [];
      const first = selectFirstEventId.get(streamId) as string | undefined;
      const current: StoredContextChunk[] = [];
      for (const row of rows) {
        if (row.firstEventId !== first) continue;
        current.push({
          from: row.from,
          to: row.to,
          text: () => {
            const text = selectText.get(streamId, row.from, row.to, row.firstEventId) as ContextChunkText | undefined;
            return text && openRow(streamId, row.from, row.to, text);
          },
        });
      }
      if (current.length < rows.length && options.writable && first !== undefined) {
        try {
          deleteStale.run(streamId, first);
        } catch (error) {
          ignored("stale context chunks not deleted (busy elsewhere); they stay ignored until a later read or write removes them", error);
        }
      }
      return current;
    },
  };
}

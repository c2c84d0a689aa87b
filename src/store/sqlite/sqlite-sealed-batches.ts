/**
 * The ciphertext of an encrypted SQLite log's sealed batches (ours; the format is `crypto/sealed-batch.ts`): one row per batch, keyed by its head's
 * global position (a rowid table: no index beside it), raw bytes (no base64), written in the head's append's transaction and deleted with its
 * stream. `arbor_sealed_batches` is created when an encrypted log is opened for writing (no schema version change: a log without encryption never
 * has one).
 */
import type Database from "better-sqlite3";
import type { BatchHeadReader } from "../crypto/sealed-batch.ts";
import { BATCH_HEAD_PREFIX } from "../crypto/sealed-record.ts";
import { hasTables } from "./sqlite-tables.ts";

const TABLE = `CREATE TABLE IF NOT EXISTS arbor_sealed_batches (
  position INTEGER PRIMARY KEY,
  sealed BLOB NOT NULL
)`;

/** The writer's hooks (inside each append's and delete's transaction) and the reader of batch heads. */
export interface SqliteSealedBatches {
  /** Stores the ciphertext of the batch whose head is the event at global position `position`. */
  insert(position: number, sealed: Buffer): void;
  /** Deletes every batch of a stream (before its events are deleted). */
  deleted(streamId: string): void;
  /** A head row with its batch's ciphertext. */
  headAt: BatchHeadReader;
  /** The batch heads whose ciphertext row is missing (`arbor doctor`): the events of their batches cannot be read. */
  headsWithoutCiphertext(): { streamId: string; version: number }[];
}

/** The sealed batches of one connection; `writable: false` creates no table (a read-only open reads what is there). */
export function createSqliteSealedBatches(db: Database.Database, options: { writable: boolean }): SqliteSealedBatches {
  if (options.writable) db.exec(TABLE);
  const exists = hasTables(db, "arbor_sealed_batches");
  const selectHead = exists
    ? db.prepare("SELECT e.event_id AS eventId, e.data AS data, b.sealed AS sealed FROM events e LEFT JOIN arbor_sealed_batches b ON b.position = e.global_position WHERE e.stream_id = ? AND e.version = ?")
    : db.prepare("SELECT event_id AS eventId, data, NULL AS sealed FROM events WHERE stream_id = ? AND version = ?");
  const insert = exists ? db.prepare("INSERT INTO arbor_sealed_batches (position, sealed) VALUES (?, ?)") : undefined;
  const remove = exists ? db.prepare("DELETE FROM arbor_sealed_batches WHERE position IN (SELECT global_position FROM events WHERE stream_id = ?)") : undefined;
  const isHead = `substr(e.data, 1, ${BATCH_HEAD_PREFIX.length}) = ?`;
  const selectOrphans = exists
    ? db.prepare(`SELECT e.stream_id AS streamId, e.version FROM events e LEFT JOIN arbor_sealed_batches b ON b.position = e.global_position WHERE ${isHead} AND b.sealed IS NULL`)
    : db.prepare(`SELECT e.stream_id AS streamId, e.version FROM events e WHERE ${isHead}`);
  return {
    insert(position, sealed) {
      insert!.run(position, sealed);
    },
    deleted(streamId) {
      remove?.run(streamId);
    },
    headAt(streamId, version) {
      const row = selectHead.get(streamId, version) as { eventId: string; data: string; sealed: Buffer | null } | undefined;
      return row && { eventId: row.eventId, data: row.data, sealed: row.sealed ?? undefined };
    },
    headsWithoutCiphertext: () => selectOrphans.all(BATCH_HEAD_PREFIX) as { streamId: string; version: number }[],
  };
}

/**
 * Test helpers: one bit flipped in the sealed data of an encrypted SQLite log, with the log closed, as a disk or a stray write would leave it. A
 * sealed batch's ciphertext is a row of `arbor_sealed_batches`; a single record's is the base64 of its `$enc` (`src/store/crypto/sealed-record.ts`).
 */
import Database from "better-sqlite3";

/** Flips one bit inside the ciphertext (past the format byte and IV) of `bytes`, in place. */
function flipBit(bytes: Buffer): void {
  bytes[Math.min(bytes.length - 1, 20)] ^= 0x04;
}

/** Flips one bit of the ciphertext of the sealed batch whose head is `streamId` at `version` (the head's row is `{"$enc":"*"…}`). */
export function flipBitInSealedBatch(path: string, streamId: string, version: number): void {
  const db = new Database(path);
  try {
    const row = db
      .prepare("SELECT b.position AS position, b.sealed AS sealed FROM arbor_sealed_batches b JOIN events e ON e.global_position = b.position WHERE e.stream_id = ? AND e.version = ?")
      .get(streamId, version) as { position: number; sealed: Buffer } | undefined;
    if (!row) throw new Error(`no sealed batch is headed by ${streamId}@${version}`);
    flipBit(row.sealed);
    db.prepare("UPDATE arbor_sealed_batches SET sealed = ? WHERE position = ?").run(row.sealed, row.position);
  } finally {
    db.close();
  }
}

/** Flips one bit of the ciphertext in the `$enc` base64 of the single sealed record at `streamId` `version`. */
export function flipBitInSealedRecord(path: string, streamId: string, version: number): void {
  const db = new Database(path);
  try {
    const data = db.prepare("SELECT data FROM events WHERE stream_id = ? AND version = ?").pluck().get(streamId, version) as string | undefined;
    const match = data === undefined ? null : /^\{"\$enc":"([A-Za-z0-9+/=]+)"/.exec(data);
    if (!data || !match) throw new Error(`${streamId}@${version} is not a single sealed record: ${data?.slice(0, 40)}`);
    const bytes = Buffer.from(match[1], "base64");
    flipBit(bytes);
    db.prepare("UPDATE events SET data = ? WHERE stream_id = ? AND version = ?").run(data.replace(match[1], bytes.toString("base64")), streamId, version);
  } finally {
    db.close();
  }
}

/** The versions of `streamId` whose stored data is a batch's head, and those sealed alone. */
export function sealedLayout(path: string, streamId: string): { heads: number[]; records: number[] } {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare("SELECT version, data FROM events WHERE stream_id = ? ORDER BY version").all(streamId) as { version: number; data: string }[];
    return {
      heads: rows.filter((row) => row.data.startsWith('{"$enc":"*')).map((row) => row.version),
      records: rows.filter((row) => /^\{"\$enc":"[A-Za-z0-9+/]/.test(row.data)).map((row) => row.version),
    };
  } finally {
    db.close();
  }
}

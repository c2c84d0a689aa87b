/**
 * Workspace blob rows in the SQLite log's own file (table `workspace_blobs`, created on first write; a log file without it simply has no blobs).
 * Internal: reached as `log.workspaceBlobs`.
 */
import type Database from "better-sqlite3";
import type { BlobRow, BlobRows } from "./blob-store.ts";

const TABLE = `CREATE TABLE IF NOT EXISTS workspace_blobs (
  tenant TEXT NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL, base TEXT, depth INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (tenant, hash)) WITHOUT ROWID`;

/** Rows over an open better-sqlite3 connection; `check(operation)` throws when the log is closed (or read-only, for writes). */
export function createSqliteBlobRows(db: Database.Database, check: { read(operation: string): void; write(operation: string): void }): BlobRows {
  const exists = () => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'workspace_blobs'").get() !== undefined;
  let ready = false;
  const readable = () => (ready ||= exists());
  return {
    async rows(tenant, hashes) {
      check.read("read workspace blobs");
      const found = new Map<string, BlobRow>();
      if (!readable() || hashes.length === 0) return found;
      const select = db.prepare("SELECT hash, size, base, depth, data FROM workspace_blobs WHERE tenant = ? AND hash = ?");
      for (const hash of new Set(hashes)) {
        const row = select.get(tenant, hash) as BlobRow | undefined;
        if (row) found.set(hash, row);
      }
      return found;
    },
    async insert(tenant, rows) {
      check.read("store workspace blobs");
      check.write("store workspace blobs");
      if (!ready) {
        db.exec(TABLE);
        ready = true;
      }
      const insert = db.prepare("INSERT OR IGNORE INTO workspace_blobs (tenant, hash, size, base, depth, data) VALUES (?, ?, ?, ?, ?, ?)");
      db.transaction(() => {
        for (const row of rows) insert.run(tenant, row.hash, row.size, row.base, row.depth, row.data);
      }).immediate();
    },
    async list(tenant) {
      check.read("list workspace blobs");
      if (!readable()) return [];
      return db.prepare("SELECT hash, base, length(data) AS bytes FROM workspace_blobs WHERE tenant = ?").all(tenant) as { hash: string; base: string | null; bytes: number }[];
    },
    async remove(tenant, hashes) {
      check.read("remove workspace blobs");
      check.write("remove workspace blobs");
      if (!readable()) return 0;
      const remove = db.prepare("DELETE FROM workspace_blobs WHERE tenant = ? AND hash = ?");
      let removed = 0;
      db.transaction(() => {
        for (const hash of hashes) removed += remove.run(tenant, hash).changes;
      }).immediate();
      return removed;
    },
  };
}

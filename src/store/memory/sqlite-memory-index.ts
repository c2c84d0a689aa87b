/**
 * The session-memory projection in the SQLite log's file: `memory_entries`, `memory_heads` and an FTS5 table `memory_fts` (created on first write).
 * Internal: reached as `log.memoryIndex`.
 */
import type Database from "better-sqlite3";
import { queryWords, searchText, type MemoryIndex, type MemoryRow } from "./memory-index.ts";

const TABLES = `
CREATE TABLE IF NOT EXISTS memory_heads (tenant TEXT NOT NULL, scope TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (tenant, scope)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_entries (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, scope TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (tenant, scope, key));
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(key, text, tokenize = 'unicode61');`;

interface Row {
  key: string;
  value: string;
  updatedAt: string;
}

const toRow = (row: Row): MemoryRow => ({ key: row.key, value: JSON.parse(row.value) as unknown, updatedAt: row.updatedAt });

/** The projection over an open better-sqlite3 connection; `check` throws when the log is closed (or read-only, for writes). */
export function createSqliteMemoryIndex(db: Database.Database, check: { read(operation: string): void; write(operation: string): void }): MemoryIndex {
  let ready = false;
  const readable = () => (ready ||= db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memory_entries'").get() !== undefined);
  const writable = () => {
    check.write("write session memory");
    if (!ready) {
      db.exec(TABLES);
      ready = true;
    }
  };
  return {
    async head(tenant, scope) {
      check.read("read session memory");
      if (!readable()) return 0;
      const row = db.prepare("SELECT version FROM memory_heads WHERE tenant = ? AND scope = ?").get(tenant, scope) as { version: number } | undefined;
      return row?.version ?? 0;
    },
    async apply(tenant, scope, changes, through) {
      check.read("write session memory");
      writable();
      const head = db.prepare("SELECT version FROM memory_heads WHERE tenant = ? AND scope = ?");
      const find = db.prepare("SELECT id FROM memory_entries WHERE tenant = ? AND scope = ? AND key = ?");
      db.transaction(() => {
        let version = (head.get(tenant, scope) as { version: number } | undefined)?.version ?? 0;
        for (const change of changes) {
          if (change.version <= version) continue;
          const existing = find.get(tenant, scope, change.key) as { id: number } | undefined;
          if (existing) {
            db.prepare("DELETE FROM memory_fts WHERE rowid = ?").run(existing.id);
            db.prepare("DELETE FROM memory_entries WHERE id = ?").run(existing.id);
          }
          if (!change.deleted) {
            const { lastInsertRowid } = db
              .prepare("INSERT INTO memory_entries (tenant, scope, key, value, updated_at) VALUES (?, ?, ?, ?, ?)")
              .run(tenant, scope, change.key, JSON.stringify(change.value ?? null), change.time ?? new Date().toISOString());
            db.prepare("INSERT INTO memory_fts (rowid, key, text) VALUES (?, ?, ?)").run(lastInsertRowid, change.key.replace(/[._:-]/g, " "), searchText(change.value));
          }
        }
        version = Math.max(version, through);
        db.prepare("INSERT INTO memory_heads (tenant, scope, version) VALUES (?, ?, ?) ON CONFLICT (tenant, scope) DO UPDATE SET version = excluded.version").run(tenant, scope, version);
      }).immediate();
    },
    async get(tenant, scope, key) {
      check.read("read session memory");
      if (!readable()) return undefined;
      const row = db.prepare('SELECT key, value, updated_at AS "updatedAt" FROM memory_entries WHERE tenant = ? AND scope = ? AND key = ?').get(tenant, scope, key) as Row | undefined;
      return row ? toRow(row) : undefined;
    },
    async list(tenant, scope, prefix = "") {
      check.read("read session memory");
      if (!readable()) return [];
      const rows = db
        .prepare('SELECT key, value, updated_at AS "updatedAt" FROM memory_entries WHERE tenant = ? AND scope = ? AND substr(key, 1, ?) = ? ORDER BY key')
        .all(tenant, scope, prefix.length, prefix) as Row[];
      return rows.map(toRow);
    },
    async search(tenant, scope, query, limit) {
      check.read("search session memory");
      const words = queryWords(query);
      if (!readable() || words.length === 0) return [];
      const match = words.map((word) => `"${word.replace(/"/g, '""')}"*`).join(" ");
      const rows = db
        .prepare(
          `SELECT e.key, e.value, e.updated_at AS "updatedAt", -bm25(memory_fts) AS score FROM memory_fts JOIN memory_entries e ON e.id = memory_fts.rowid
           WHERE memory_fts MATCH ? AND e.tenant = ? AND e.scope = ? ORDER BY score DESC, e.key LIMIT ?`,
        )
        .all(match, tenant, scope, limit) as (Row & { score: number })[];
      return rows.map((row) => ({ ...toRow(row), score: row.score }));
    },
    async drop(tenant, scope) {
      check.read("delete session memory");
      check.write("delete session memory");
      if (!readable()) return;
      db.transaction(() => {
        db.prepare("DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_entries WHERE tenant = ? AND scope = ?)").run(tenant, scope);
        db.prepare("DELETE FROM memory_entries WHERE tenant = ? AND scope = ?").run(tenant, scope);
        db.prepare("DELETE FROM memory_heads WHERE tenant = ? AND scope = ?").run(tenant, scope);
      }).immediate();
    },
  };
}

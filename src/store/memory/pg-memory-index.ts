/**
 * The session-memory projection in the PostgreSQL log's schema: `memory_entries` (with a generated `tsvector` and its GIN index) and `memory_heads`,
 * created on the first write (reads find nothing without them). Internal: reached as `log.memoryIndex`.
 */
import type pg from "pg";
import { queryWords, searchText, type MemoryIndex, type MemoryRow } from "./memory-index.ts";
import { ignoreError } from "../../core/ignored.ts";

/** The projection over the log's pool, in its (quoted) schema; `ready` is the log's migration; `refuseWrite` throws for a read-only log. */
export function createPostgresMemoryIndex(pool: pg.Pool, quotedSchema: string, ready: Promise<void>, refuseWrite: (operation: string) => void = () => undefined): MemoryIndex {
  const entries = `${quotedSchema}.memory_entries`;
  const heads = `${quotedSchema}.memory_heads`;
  let tables: Promise<void> | undefined;
  const ensure = () =>
    (tables ??= (async () => {
      await ready;
      await pool.query(`CREATE TABLE IF NOT EXISTS ${heads} (tenant text NOT NULL, scope text NOT NULL, version bigint NOT NULL, PRIMARY KEY (tenant, scope))`);
      await pool.query(`CREATE TABLE IF NOT EXISTS ${entries} (
        tenant text NOT NULL, scope text NOT NULL, key text NOT NULL, value jsonb NOT NULL, text text NOT NULL, updated_at timestamptz NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', translate(key, '._:-', '    ') || ' ' || text)) STORED,
        PRIMARY KEY (tenant, scope, key))`);
      await pool.query(`CREATE INDEX IF NOT EXISTS memory_entries_tsv ON ${entries} USING gin (tsv)`);
    })().catch((error: unknown) => {
      tables = undefined;
      throw error;
    }));
  // Reads never create the tables (a read-only log must not write): missing tables hold nothing.
  let present = false;
  const readable = async () => {
    await ready;
    if (!present) present = (await pool.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [entries])).rows[0].present;
    return present;
  };
  const toRow = (row: { key: string; value: unknown; updatedAt: Date }): MemoryRow => ({ key: row.key, value: row.value, updatedAt: row.updatedAt.toISOString() });
  return {
    async head(tenant, scope) {
      if (!(await readable())) return 0;
      const { rows } = await pool.query<{ version: string }>(`SELECT version FROM ${heads} WHERE tenant = $1 AND scope = $2`, [tenant, scope]);
      return rows.length ? Number(rows[0].version) : 0;
    },
    async apply(tenant, scope, changes, through) {
      refuseWrite("write session memory");
      await ensure();
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<{ version: string }>(`SELECT version FROM ${heads} WHERE tenant = $1 AND scope = $2 FOR UPDATE`, [tenant, scope]);
        let version = rows.length ? Number(rows[0].version) : 0;
        for (const change of changes) {
          if (change.version <= version) continue;
          if (change.deleted) await client.query(`DELETE FROM ${entries} WHERE tenant = $1 AND scope = $2 AND key = $3`, [tenant, scope, change.key]);
          else
            await client.query(
              `INSERT INTO ${entries} (tenant, scope, key, value, text, updated_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6)
               ON CONFLICT (tenant, scope, key) DO UPDATE SET value = excluded.value, text = excluded.text, updated_at = excluded.updated_at`,
              [tenant, scope, change.key, JSON.stringify(change.value ?? null), searchText(change.value), change.time ?? new Date().toISOString()],
            );
        }
        version = Math.max(version, through);
        await client.query(`INSERT INTO ${heads} (tenant, scope, version) VALUES ($1, $2, $3) ON CONFLICT (tenant, scope) DO UPDATE SET version = excluded.version`, [tenant, scope, version]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(ignoreError("a failed ROLLBACK after a failed transaction; the transaction's error is thrown"));
        throw error;
      } finally {
        client.release();
      }
    },
    async get(tenant, scope, key) {
      if (!(await readable())) return undefined;
      const { rows } = await pool.query<{ key: string; value: unknown; updatedAt: Date }>(`SELECT key, value, updated_at AS "updatedAt" FROM ${entries} WHERE tenant = $1 AND scope = $2 AND key = $3`, [tenant, scope, key]);
      return rows.length ? toRow(rows[0]) : undefined;
    },
    async list(tenant, scope, prefix = "") {
      if (!(await readable())) return [];
      const { rows } = await pool.query<{ key: string; value: unknown; updatedAt: Date }>(
        `SELECT key, value, updated_at AS "updatedAt" FROM ${entries} WHERE tenant = $1 AND scope = $2 AND left(key, $3) = $4 ORDER BY key COLLATE "C"`,
        [tenant, scope, prefix.length, prefix],
      );
      return rows.map(toRow);
    },
    async search(tenant, scope, query, limit) {
      if (!(await readable())) return [];
      const words = queryWords(query);
      if (words.length === 0) return [];
      const tsquery = words.map((word) => `${word.replace(/[^\p{L}\p{N}_]/gu, "")}:*`).join(" & ");
      const { rows } = await pool.query<{ key: string; value: unknown; updatedAt: Date; score: number }>(
        `SELECT key, value, updated_at AS "updatedAt", ts_rank(tsv, q) AS score FROM ${entries}, to_tsquery('simple', $3) q
         WHERE tenant = $1 AND scope = $2 AND tsv @@ q ORDER BY score DESC, key COLLATE "C" LIMIT $4`,
        [tenant, scope, tsquery, limit],
      );
      return rows.map((row) => ({ ...toRow(row), score: Number(row.score) }));
    },
    async drop(tenant, scope) {
      refuseWrite("delete session memory");
      if (!(await readable())) return;
      await pool.query(`DELETE FROM ${entries} WHERE tenant = $1 AND scope = $2`, [tenant, scope]);
      await pool.query(`DELETE FROM ${heads} WHERE tenant = $1 AND scope = $2`, [tenant, scope]);
    },
  };
}

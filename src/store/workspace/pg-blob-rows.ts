/**
 * Workspace blob rows in the PostgreSQL log's schema (table `<schema>.workspace_blobs`, created on the first write; reads of a schema without it find
 * nothing), so another host can rebuild a workspace from the database alone. Internal: reached as `log.workspaceBlobs`.
 */
import type pg from "pg";
import type { BlobRow, BlobRows } from "./blob-store.ts";

/** Rows over the log's pool, in its (quoted) schema; `ready` is the log's schema migration; `refuseWrite` throws for a read-only log. */
export function createPostgresBlobRows(pool: pg.Pool, quotedSchema: string, ready: Promise<void>, refuseWrite: (operation: string) => void = () => undefined): BlobRows {
  const t = `${quotedSchema}.workspace_blobs`;
  let table: Promise<void> | undefined;
  const ensure = () =>
    (table ??= (async () => {
      await ready;
      await pool.query(`CREATE TABLE IF NOT EXISTS ${t} (
        tenant text NOT NULL, hash text NOT NULL, size bigint NOT NULL, base text, depth integer NOT NULL, data bytea NOT NULL,
        PRIMARY KEY (tenant, hash))`);
    })().catch((error: unknown) => {
      table = undefined;
      throw error;
    }));
  // Reads never create the table (a read-only log must not write): a missing table has no blobs.
  let present = false;
  const readable = async () => {
    await ready;
    if (!present) present = (await pool.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [t])).rows[0].present;
    return present;
  };
  return {
    async rows(tenant, hashes) {
      if (!(await readable())) return new Map();
      const found = new Map<string, BlobRow>();
      if (hashes.length === 0) return found;
      const { rows } = await pool.query<{ hash: string; size: string; base: string | null; depth: number; data: Buffer }>(
        `SELECT hash, size, base, depth, data FROM ${t} WHERE tenant = $1 AND hash = ANY($2::text[])`,
        [tenant, [...new Set(hashes)]],
      );
      for (const row of rows) found.set(row.hash, { ...row, size: Number(row.size) });
      return found;
    },
    async insert(tenant, rows) {
      refuseWrite("store workspace blobs");
      await ensure();
      await pool.query(
        `INSERT INTO ${t} (tenant, hash, size, base, depth, data)
         SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::int[], $6::bytea[]) ON CONFLICT DO NOTHING`,
        [tenant, rows.map((row) => row.hash), rows.map((row) => row.size), rows.map((row) => row.base), rows.map((row) => row.depth), rows.map((row) => row.data)],
      );
    },
    async list(tenant) {
      if (!(await readable())) return [];
      const { rows } = await pool.query<{ hash: string; base: string | null; bytes: number }>(`SELECT hash, base, octet_length(data) AS bytes FROM ${t} WHERE tenant = $1`, [tenant]);
      return rows;
    },
    async remove(tenant, hashes) {
      refuseWrite("remove workspace blobs");
      if (!(await readable())) return 0;
      const result = await pool.query(`DELETE FROM ${t} WHERE tenant = $1 AND hash = ANY($2::text[])`, [tenant, [...hashes]]);
      return result.rowCount ?? 0;
    },
  };
}

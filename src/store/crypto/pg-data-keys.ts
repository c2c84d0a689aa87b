/**
 * The PostgreSQL key store (ours; `data-key-rows.ts`): `<key schema>.data_keys` in a schema of its own (default `<log schema>_keys`), so a dump of
 * the log's schema holds no key; created by the first `insert` (the first sealed write), never by an open or a read (until then the store reads as
 * empty); a read-only store creates nothing (its `insert` is `InvalidStateError`). `destroy` deletes the row, waits
 * (at most 30 s) until no snapshot can still see it, then rewrites the table (`VACUUM FULL` copies row versions open snapshots can see); on a time
 * out the table is still rewritten and `LogCommitError` (`details.keyDeleted: true`) names the holders. WAL records stay until recycled.
 */
import type pg from "pg";
import { InvalidStateError, LogCommitError } from "../../core/errors.ts";
import { quoteSchema } from "../postgres/pg-schema.ts";
import type { DataKeyRow, DataKeyRows } from "./data-key-rows.ts";

/** How long a destroy waits for older snapshots to end before it rewrites the table anyway. */
const HORIZON_WAIT_MS = 30_000;

/**
 * The key store in `keySchema` of the pool's database.
 *
 * @throws InvalidArgumentError for a schema name that is not a plain identifier.
 */
export function createPgDataKeys(pool: pg.Pool, keySchema: string, options: { readOnly: boolean }): DataKeyRows {
  const table = `${quoteSchema(keySchema)}.data_keys`;
  /** Set once the table is seen or created (it is never dropped by Arbor). */
  let present = false;
  const exists = async (): Promise<boolean> => {
    if (!present) present = (await pool.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [table])).rows[0]?.found != null;
    return present;
  };
  let creating: Promise<void> | undefined;
  const create = (): Promise<void> =>
    (creating ??= (async () => {
      if (options.readOnly) {
        throw new InvalidStateError(`The key table ${table} was opened read-only: no data key is created.`, { details: { schema: keySchema } });
      }
      const client = await pool.connect();
      try {
        // One creator at a time: concurrent CREATE ... IF NOT EXISTS can still collide in the catalog.
        await client.query("SELECT pg_advisory_lock(hashtext($1))", [`arbor data keys ${keySchema}`]);
        try {
          await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteSchema(keySchema)}`);
          await client.query(
            `CREATE TABLE IF NOT EXISTS ${table} (key_id text PRIMARY KEY, master_key_id text NOT NULL, wrapped bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
          );
        } finally {
          await client.query("SELECT pg_advisory_unlock(hashtext($1))", [`arbor data keys ${keySchema}`]);
        }
      } finally {
        client.release();
      }
      present = true;
    })().finally(() => {
      if (!present) creating = undefined;
    }));
  /** The rows `text` selects; none while the table does not exist. */
  const query = async <Row extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<Row[]> => ((await exists()) ? (await pool.query<Row>(text, values)).rows : []);
  /** Rewrites the table so that no dead row version (a destroyed or re-wrapped key) stays in its pages. */
  const compact = async (): Promise<void> => {
    if (!(await exists())) return;
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      await client.query("SET lock_timeout = '10s'");
      await client.query(`VACUUM FULL ${table}`);
      await client.query("RESET lock_timeout");
    } catch (error) {
      failure = error as Error;
      throw error;
    } finally {
      // A failed connection is not put back in the pool.
      client.release(failure);
    }
  };
  /**
   * Waits until no other backend of this database holds a snapshot older than transaction `xid` (which VACUUM FULL would keep the deleted row for).
   * Returns the pids still holding one at the deadline (empty when the horizon passed).
   */
  const waitForHorizon = async (xid: string): Promise<number[]> => {
    const deadline = Date.now() + HORIZON_WAIT_MS;
    for (;;) {
      const { rows } = await pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND backend_xmin IS NOT NULL AND age(backend_xmin) >= age($1::text::xid)`,
        [xid],
      );
      if (rows.length === 0 || Date.now() >= deadline) return rows.map((row) => row.pid);
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
  };
  const SELECT = `SELECT key_id AS "keyId", master_key_id AS "masterKeyId", wrapped FROM ${table} WHERE key_id = $1`;
  return {
    name: table,
    async get(keyId) {
      return (await query<DataKeyRow>(SELECT, [keyId]))[0];
    },
    exists,
    async insert(row) {
      if (!(await exists())) await create();
      await query(`INSERT INTO ${table} (key_id, master_key_id, wrapped) VALUES ($1, $2, $3) ON CONFLICT (key_id) DO NOTHING`, [row.keyId, row.masterKeyId, row.wrapped]);
      return (await query<DataKeyRow>(SELECT, [row.keyId]))[0];
    },
    async destroy(keyId) {
      if (!(await exists())) return false;
      const client = await pool.connect();
      let xid: string | undefined;
      let failure: Error | undefined;
      try {
        await client.query("BEGIN");
        const removed = (await client.query(`DELETE FROM ${table} WHERE key_id = $1 RETURNING 1`, [keyId])).rowCount ?? 0;
        // The 32-bit transaction id of the delete, as `backend_xmin` shows transaction ids.
        if (removed > 0) xid = String(BigInt((await client.query<{ id: string }>("SELECT txid_current()::text AS id")).rows[0].id) % 4294967296n);
        await client.query("COMMIT");
      } catch (error) {
        failure = error as Error;
        await client.query("ROLLBACK").catch((rollback: unknown) => {
          failure = new AggregateError([error, rollback], "delete of the data key failed and so did its rollback");
        });
        throw failure;
      } finally {
        client.release(failure);
      }
      if (xid === undefined) return false;
      const holders = await waitForHorizon(xid);
      await compact();
      if (holders.length > 0) {
        throw new LogCommitError(
          `The data key "${keyId}" is deleted, but backends ${holders.join(", ")} of this database still hold a snapshot taken before the delete, so the table rewrite kept the deleted row's old version in ${table}'s file: run VACUUM FULL ${table} once they end.`,
          { details: { keyId, pids: holders, keyDeleted: true } },
        );
      }
      return true;
    },
    compact,
    async rewrap(row, from) {
      return (await query(`UPDATE ${table} SET master_key_id = $1, wrapped = $2 WHERE key_id = $3 AND master_key_id = $4 RETURNING 1`, [row.masterKeyId, row.wrapped, row.keyId, from])).length > 0;
    },
    async list() {
      return query<{ keyId: string; masterKeyId: string }>(`SELECT key_id AS "keyId", master_key_id AS "masterKeyId" FROM ${table} ORDER BY key_id`, []);
    },
    async close() {},
  };
}

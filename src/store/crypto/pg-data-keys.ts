/**
 * The PostgreSQL key store (ours; `data-key-rows.ts`): `<key schema>.data_keys` in a schema of its own (default `<log schema>_keys`), so a dump of
 * the log's schema holds no key; created by the first `insert` (the first sealed write), never by an open or a read (until then the store reads as
 * empty); a read-only store creates nothing (its `insert` is `InvalidStateError`). `destroy` deletes the row, waits
 * (at most 30 s) until no snapshot can still see it and no older transaction runs anywhere in the cluster, then rewrites the table (`VACUUM FULL`
 * copies row versions open snapshots can see, and its own snapshot is held back by the cluster's oldest running transaction); on a time out the
 * table is still rewritten and `LogCommitError` (`details.keyDeleted: true`) names the holders. WAL records stay until recycled.
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
   * Waits until VACUUM FULL would drop the row deleted by transaction `fullXid` (64-bit): no other backend of this database holds a snapshot older
   * than it, and no transaction of the cluster as old as it still runs (in any database, or prepared): the rewrite's own snapshot starts at the
   * oldest running transaction of the whole cluster, and keeps every row version that snapshot could see. Returns what still holds it at the
   * deadline (pids, possibly none when only a prepared transaction or a backend this role may not see does), or undefined when the horizon passed.
   */
  const waitForHorizon = async (fullXid: bigint): Promise<number[] | undefined> => {
    const xid = String(fullXid % 4294967296n);
    const deadline = Date.now() + HORIZON_WAIT_MS;
    for (;;) {
      const { rows } = await pool.query<{ pid: number | null; oldest: string }>(
        `SELECT held.pid, txid_snapshot_xmin(txid_current_snapshot())::text AS oldest
           FROM (SELECT NULL::int) AS one
           LEFT JOIN pg_stat_activity AS held ON held.pid <> pg_backend_pid() AND (
             (held.datname = current_database() AND held.backend_xmin IS NOT NULL AND age(held.backend_xmin) >= age($1::text::xid))
             OR (held.backend_xid IS NOT NULL AND age(held.backend_xid) >= age($1::text::xid)))`,
        [xid],
      );
      const pids = rows.flatMap((row) => (row.pid === null ? [] : [row.pid]));
      if (pids.length === 0 && BigInt(rows[0].oldest) > fullXid) return undefined;
      if (Date.now() >= deadline) return pids;
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
      let xid: bigint | undefined;
      let failure: Error | undefined;
      try {
        await client.query("BEGIN");
        const removed = (await client.query(`DELETE FROM ${table} WHERE key_id = $1 RETURNING 1`, [keyId])).rowCount ?? 0;
        // The transaction id of the delete (64-bit, with its epoch).
        if (removed > 0) xid = BigInt((await client.query<{ id: string }>("SELECT txid_current()::text AS id")).rows[0].id);
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
      if (holders !== undefined) {
        const who =
          holders.length > 0
            ? `backends ${holders.join(", ")} still hold a snapshot of this database or run a transaction (in any database of the cluster) begun before the delete`
            : "a transaction begun before the delete still runs (a prepared transaction, or a backend this role cannot see)";
        throw new LogCommitError(
          `The data key "${keyId}" is deleted, but ${who}, so the table rewrite kept the deleted row's old version in ${table}'s file: run VACUUM FULL ${table} once they end.`,
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

/**
 * Stream ownership over PostgreSQL (ours; the advisory-lock-plus-fencing-token
 * recipe of Emmett's PostgreSQL event store). Implements
 * {@link StreamOwnership}.
 *
 * Contract:
 * - the ownership of a stream is a session-level advisory lock
 *   `pg_try_advisory_lock(key)`, key = `hashtextextended(schema || ':' || streamId, 0)`
 *   (64 bits), held by ONE dedicated connection of the log (opened on the first
 *   `acquire`, outside the pool). The lock dies
 *   with that connection: when the owning process is killed, the server ends the
 *   backend at once (socket closed); when a host vanishes, the server notices at
 *   its TCP keepalive timeout (`tcp_keepalives_*`). Then another process may acquire;
 * - each acquisition bumps the stream's row in `stream_owners` (token + 1, the
 *   owner's description): the fencing token that `append_batch` checks for every
 *   append the owning log sends;
 * - if the dedicated connection is lost while this process lives, its locks are
 *   gone; it keeps its tokens, so its appends still succeed until another process
 *   takes over (no one else wrote: nothing interleaves), then fail as fenced;
 * - `isOwnedElsewhere` probes with `pg_try_advisory_xact_lock(key)` in an
 *   autocommit statement (released at once).
 *
 * @example
 * ```ts
 * const ownership = createPgOwnership({ pool, schema: "arbor", ready, connect: () => openClient() });
 * const lease = await ownership.acquire("session-a", { pid: process.pid });
 * ```
 */
import type pg from "pg";
import { SessionBusyError } from "../core/errors.ts";
import { quoteSchema } from "./pg-schema.ts";
import type { StreamLease, StreamOwnership } from "./stream-ownership.ts";

/** Options of {@link createPgOwnership}. */
export interface PgOwnershipOptions {
  pool: pg.Pool;
  /** Unquoted schema name. */
  schema: string;
  /** Resolves once the schema exists. */
  ready: Promise<void>;
  /** Opens the dedicated connection that holds the locks (outside the pool). */
  connect(): Promise<pg.Client>;
}

/** {@link StreamOwnership} plus `close()`, which releases every lock (the log calls it). */
export interface PgOwnership extends StreamOwnership {
  close(): Promise<void>;
}

/**
 * Creates the ownership of one PostgreSQL log (see the module contract).
 *
 * @example
 * ```ts
 * const ownership = createPgOwnership({ pool, schema: "arbor", ready, connect });
 * ```
 */
export function createPgOwnership(options: PgOwnershipOptions): PgOwnership {
  const { pool, schema } = options;
  const s = quoteSchema(schema);
  const held = new Map<string, number>();
  let lockClient: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  /** Lock-connection calls run one at a time (pg queues them anyway; this keeps acquire atomic per stream). */
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };
  const connection = async (): Promise<pg.Client> => {
    if (lockClient) return lockClient;
    connecting ??= (async () => {
      const client = await options.connect();
      client.on("error", () => {
        // The locks went with the connection; the tokens stay (see the contract).
        if (lockClient === client) lockClient = undefined;
        void client.end().catch(() => undefined);
      });
      lockClient = client;
      return client;
    })().finally(() => (connecting = undefined));
    return connecting;
  };
  const key = "hashtextextended($1 || ':' || $2, 0)";

  const ownership: PgOwnership = {
    acquire(streamId, owner = {}) {
      return serialized(async () => {
        if (held.has(streamId)) {
          throw new SessionBusyError(`Stream "${streamId}" is already owned by this process (token ${held.get(streamId)}).`, {
            details: { streamId },
          });
        }
        const client = await connection();
        const locked = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${key}) AS ok`, [schema, streamId]);
        if (!locked.rows[0].ok) {
          const row = await client.query<{ owner: unknown; token: string }>(`SELECT owner, token FROM ${s}.stream_owners WHERE stream_id = $1`, [
            streamId,
          ]);
          const current = row.rows[0];
          throw new SessionBusyError(
            `Session stream "${streamId}" is owned by another live process (${JSON.stringify(current?.owner ?? "unknown")}); wait for its run to finish or stop that process, then retry.`,
            { details: { streamId, owner: current?.owner, token: current ? Number(current.token) : undefined } },
          );
        }
        try {
          const row = await client.query<{ token: string }>(
            `INSERT INTO ${s}.stream_owners (stream_id, token, owner) VALUES ($1, 1, $2::json)
             ON CONFLICT (stream_id) DO UPDATE SET token = ${s}.stream_owners.token + 1, owner = EXCLUDED.owner, acquired_at = now()
             RETURNING token`,
            [streamId, JSON.stringify(owner)],
          );
          const token = Number(row.rows[0].token);
          held.set(streamId, token);
          return lease(streamId, token);
        } catch (error) {
          await client.query(`SELECT pg_advisory_unlock(${key})`, [schema, streamId]).catch(() => undefined);
          throw error;
        }
      });
    },
    async isOwnedElsewhere(streamId) {
      if (held.has(streamId)) return false;
      await options.ready;
      const probe = await pool.query<{ free: boolean }>(`SELECT pg_try_advisory_xact_lock(${key}) AS free`, [schema, streamId]);
      return !probe.rows[0].free;
    },
    tokenOf(streamId) {
      return held.get(streamId);
    },
    async close() {
      await queue;
      held.clear();
      const client = lockClient;
      lockClient = undefined;
      if (client) {
        await client.end().catch(() => undefined); // the locks end with the connection
      }
    },
  };

  function lease(streamId: string, token: number): StreamLease {
    let released = false;
    return {
      streamId,
      token,
      release() {
        if (released) return Promise.resolve();
        released = true;
        return serialized(async () => {
          if (held.get(streamId) !== token) return;
          held.delete(streamId);
          const client = lockClient;
          if (client) await client.query(`SELECT pg_advisory_unlock(${key})`, [schema, streamId]).catch(() => undefined);
        });
      },
    };
  }
  return ownership;
}

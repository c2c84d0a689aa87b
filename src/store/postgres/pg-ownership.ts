/**
 * {@link StreamOwnership} over PostgreSQL (ours; Emmett's advisory lock plus fencing token): a session-level `pg_try_advisory_lock` per stream, held
 * by one dedicated connection (it dies with the process or, for a vanished host, at the TCP keepalive timeout), and a `stream_owners` row whose
 * token `append_batch` checks on every append. A lease not renewed past its row's `expires_at` is taken over: `acquire` ends the holder's backend
 * (`pg_terminate_backend`) and takes the lock; a renewal that finds another token is `LeaseLostError`.
 */
import type pg from "pg";
import { LeaseLostError, SessionBusyError } from "../../core/errors.ts";
import { quoteSchema } from "./pg-schema.ts";
import { DEFAULT_LEASE_TTL_MS, type StreamLease, type StreamOwnership } from "../log/stream-ownership.ts";
import { ignoreError } from "../../core/ignored.ts";

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

/** Creates the ownership of one PostgreSQL log (see the module contract). */
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
    queue = run.catch(ignoreError("a failed lock call rejects its own caller; the queue goes on"));
    return run;
  };
  const connection = async (): Promise<pg.Client> => {
    if (lockClient) return lockClient;
    connecting ??= (async () => {
      const client = await options.connect();
      client.on("error", () => {
        // The locks went with the connection; the tokens stay (see the contract).
        if (lockClient === client) lockClient = undefined;
        void client.end().catch(ignoreError("ending a failed lock connection; its locks went with it"));
      });
      lockClient = client;
      return client;
    })().finally(() => (connecting = undefined));
    return connecting;
  };
  const key = "hashtextextended($1 || ':' || $2, 0)";

  const ownership: PgOwnership = {
    acquire(streamId, owner = {}, leaseOptions = {}) {
      const ttlMs = leaseOptions.ttlMs ?? DEFAULT_LEASE_TTL_MS;
      return serialized(async () => {
        if (held.has(streamId)) {
          throw new SessionBusyError(`Stream "${streamId}" is already owned by this process (token ${held.get(streamId)}).`, {
            details: { streamId },
          });
        }
        const client = await connection();
        const tryLock = async () => (await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${key}) AS ok`, [schema, streamId])).rows[0].ok;
        let locked = await tryLock();
        if (!locked) {
          const row = await client.query<{ owner: unknown; token: string; expired: boolean; backend_pid: number | null }>(
            `SELECT owner, token, backend_pid, (expires_at IS NOT NULL AND expires_at < now()) AS expired FROM ${s}.stream_owners WHERE stream_id = $1`,
            [streamId],
          );
          const current = row.rows[0];
          if (current?.expired && current.backend_pid !== null) {
            // The owner stopped renewing (paused, partitioned): end the backend that holds its lock, then take it.
            await client.query("SELECT pg_terminate_backend($1)", [current.backend_pid]).catch(ignoreError("the expired owner's backend could not be ended; the lock is tried again below"));
            for (let attempt = 0; attempt < 100 && !locked; attempt += 1) {
              locked = await tryLock();
              if (!locked) await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }
        }
        if (!locked) {
          const row = await client.query<{ owner: unknown; token: string }>(`SELECT owner, token FROM ${s}.stream_owners WHERE stream_id = $1`, [streamId]);
          const current = row.rows[0];
          throw new SessionBusyError(
            `Session stream "${streamId}" is owned by another live process (${JSON.stringify(current?.owner ?? "unknown")}); wait for its run to finish or stop that process, then retry.`,
            { details: { streamId, owner: current?.owner, token: current ? Number(current.token) : undefined } },
          );
        }
        try {
          const row = await client.query<{ token: string }>(
            `INSERT INTO ${s}.stream_owners (stream_id, token, owner, expires_at, backend_pid)
             VALUES ($1, 1, $2::json, now() + make_interval(secs => $3::double precision / 1000), pg_backend_pid())
             ON CONFLICT (stream_id) DO UPDATE SET token = ${s}.stream_owners.token + 1, owner = EXCLUDED.owner, acquired_at = now(),
               expires_at = EXCLUDED.expires_at, backend_pid = EXCLUDED.backend_pid
             RETURNING token`,
            [streamId, JSON.stringify(owner), ttlMs],
          );
          const token = Number(row.rows[0].token);
          held.set(streamId, token);
          return lease(streamId, token, ttlMs);
        } catch (error) {
          await client.query(`SELECT pg_advisory_unlock(${key})`, [schema, streamId]).catch(ignoreError("unlocking after a failed acquire; the acquire's error is thrown"));
          throw error;
        }
      });
    },
    async isOwnedElsewhere(streamId) {
      if (held.has(streamId)) return false;
      await options.ready;
      const probe = await pool.query<{ free: boolean; expired: boolean | null }>(
        `SELECT pg_try_advisory_xact_lock(${key}) AS free,
                (SELECT expires_at IS NOT NULL AND expires_at < now() FROM ${s}.stream_owners WHERE stream_id = $2) AS expired`,
        [schema, streamId],
      );
      return !probe.rows[0].free && probe.rows[0].expired !== true;
    },
    tokenOf(streamId) {
      return held.get(streamId);
    },
    fencesAppends: true,
    async close() {
      await queue;
      held.clear();
      const client = lockClient;
      lockClient = undefined;
      if (client) {
        await client.end().catch(ignoreError("ending the lock connection at close; the locks end with it"));
      }
    },
  };

  function lease(streamId: string, token: number, ttlMs: number): StreamLease {
    let released = false;
    const lost = (why: string) =>
      new LeaseLostError(`The lease of stream "${streamId}" (token ${token}) is lost: ${why}; another process may have taken its run over.`, { details: { streamId, token } });
    return {
      streamId,
      token,
      ttlMs,
      renew() {
        return serialized(async () => {
          const client = lockClient;
          if (released || held.get(streamId) !== token) throw lost("it was released");
          if (!client) throw lost("the connection holding its lock is gone");
          const renewed = await client
            .query(`UPDATE ${s}.stream_owners SET expires_at = now() + make_interval(secs => $3::double precision / 1000) WHERE stream_id = $1 AND token = $2`, [streamId, token, ttlMs])
            .catch((error: unknown) => {
              throw lost(`its renewal failed (${error instanceof Error ? error.message : String(error)})`);
            });
          if (renewed.rowCount !== 1) throw lost("the stream has a newer owner");
        });
      },
      release() {
        if (released) return Promise.resolve();
        released = true;
        return serialized(async () => {
          if (held.get(streamId) !== token) return;
          held.delete(streamId);
          const client = lockClient;
          if (client) await client.query(`SELECT pg_advisory_unlock(${key})`, [schema, streamId]).catch(ignoreError("a failed unlock at release: the lock ends with its connection, the token was already dropped"));
        });
      },
    };
  }
  return ownership;
}

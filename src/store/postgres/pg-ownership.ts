/**
 * {@link StreamOwnership} over PostgreSQL (ours; Emmett's advisory lock plus fencing token). The lease is the stream's `stream_owners` row: its
 * token, which `append_rows` checks on every append, the owner, `expires_at` and the backend pid of the owning process's one dedicated lock
 * connection (it dies with the process or, for a vanished host, at the TCP keepalive timeout). The row names a live owner while it is unexpired
 * and its backend is alive (`pg_stat_activity`). Each owner also holds a session-level `pg_try_advisory_lock` on the stream when it can, so two
 * acquirers of a free stream do not race, and so an older process (which trusts the lock alone) sees the stream owned.
 * - `acquire` refuses (`SessionBusyError`) a row naming a live owner, whoever holds the lock, and a stream whose lock is held elsewhere that has
 *   no row yet (its first owner is acquiring it); anything else it takes by bumping the token compared-and-set against the row it read, so of two
 *   takers one wins. A row whose backend is gone (process killed, connection lost) is taken at once; one that lapsed past `expires_at` (owner
 *   paused, cut off) is taken over even while its old owner's connection, and lock, live on: the lock connection carries every lease of its
 *   process, so it is never ended. The old owner is excluded by the token alone: its renewal finds another token (`LeaseLostError`), its appends
 *   are refused, its release only unlocks its own lock. A lease taken without the lock takes it at a later renewal when it is free.
 * - `release` expires its row (for its own token) and unlocks, so the stream is free at once; `isOwnedElsewhere` is true exactly when `acquire`
 *   would refuse.
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

/** A stream this process holds: its token, the connection its row names, and whether that connection holds the stream's advisory lock. */
interface Held {
  token: number;
  client: pg.Client;
  locked: boolean;
}

/** The owner and token of a stream's row. */
interface OwnerRow {
  owner: unknown;
  token: string;
}

/** Creates the ownership of one PostgreSQL log (see the module contract). */
export function createPgOwnership(options: PgOwnershipOptions): PgOwnership {
  const { pool, schema } = options;
  const s = quoteSchema(schema);
  const held = new Map<string, Held>();
  let lockClient: { client: pg.Client; pid: number } | undefined;
  let connecting: Promise<{ client: pg.Client; pid: number }> | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  /** Lock-connection calls run one at a time (pg queues them anyway; this keeps acquire atomic per stream). */
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(ignoreError("a failed lock call rejects its own caller; the queue goes on"));
    return run;
  };
  const connection = async (): Promise<{ client: pg.Client; pid: number }> => {
    if (lockClient) return lockClient;
    connecting ??= (async () => {
      const client = await options.connect();
      client.on("error", () => {
        // The locks went with the connection, and the rows naming its backend are free to take (see the contract).
        if (lockClient?.client === client) lockClient = undefined;
        void client.end().catch(ignoreError("ending a failed lock connection; its locks went with it"));
      });
      // Its backend pid is what the rows it writes name; a row naming it is never another owner's.
      const pid = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid").then(
        (result) => result.rows[0].pid,
        async (error: unknown) => {
          await client.end().catch(ignoreError("ending a lock connection whose first query failed; that query's error is thrown"));
          throw error;
        },
      );
      lockClient = { client, pid };
      return lockClient;
    })().finally(() => (connecting = undefined));
    return connecting;
  };
  const key = "hashtextextended($1 || ':' || $2, 0)";
  /** True when row `o` names a live owner whose backend is not `pid` (SQL): unexpired, its backend alive. */
  const liveOwner = (pid: string) =>
    `(o.backend_pid IS NOT NULL AND o.backend_pid IS DISTINCT FROM ${pid} AND (o.expires_at IS NULL OR o.expires_at > now())
      AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = o.backend_pid))`;
  const busy = async (client: pg.Client, streamId: string, row?: OwnerRow): Promise<never> => {
    const current = row ?? (await client.query<OwnerRow>(`SELECT owner, token FROM ${s}.stream_owners WHERE stream_id = $1`, [streamId])).rows[0];
    throw new SessionBusyError(
      `Session stream "${streamId}" is owned by another live process (${JSON.stringify(current?.owner ?? "unknown")}); wait for its run to finish or stop that process, then retry.`,
      { details: { streamId, owner: current?.owner, token: current ? Number(current.token) : undefined } },
    );
  };

  const ownership: PgOwnership = {
    acquire(streamId, owner = {}, leaseOptions = {}) {
      const ttlMs = leaseOptions.ttlMs ?? DEFAULT_LEASE_TTL_MS;
      return serialized(async () => {
        if (held.has(streamId)) {
          throw new SessionBusyError(`Stream "${streamId}" is already owned by this process (token ${held.get(streamId)?.token}).`, {
            details: { streamId },
          });
        }
        const { client } = await connection();
        // The lock and the row in one statement (one row: stream_id is the key).
        const { locked, ...row } = (
          await client.query<{ locked: boolean; owner: unknown; token: string | null; live: boolean | null }>(
            `SELECT pg_try_advisory_lock(${key}) AS locked, o.owner, o.token, ${liveOwner("pg_backend_pid()")} AS live
             FROM (SELECT 1) AS one LEFT JOIN ${s}.stream_owners o ON o.stream_id = $2`,
            [schema, streamId],
          )
        ).rows[0];
        const current = row.token === null ? undefined : { owner: row.owner, token: row.token };
        let kept = false;
        try {
          // A live owner is refused whoever holds the lock: after a takeover the live owner may hold none. Without a row, a lock held elsewhere is a
          // first owner between its lock and its row.
          if (row.live === true || (!current && !locked)) return await busy(client, streamId, current);
          const expires = "now() + make_interval(secs => $3::double precision / 1000)";
          const sentAt = Date.now();
          // Compared and set against the row read above, and only while it names no live owner: of two takers one wins.
          const taken = current
            ? await client.query<{ token: string }>(
                `UPDATE ${s}.stream_owners AS o SET token = o.token + 1, owner = $2::json, acquired_at = now(), expires_at = ${expires}, backend_pid = pg_backend_pid()
                 WHERE o.stream_id = $1 AND o.token = $4 AND NOT ${liveOwner("pg_backend_pid()")} RETURNING o.token`,
                [streamId, JSON.stringify(owner), ttlMs, current.token],
              )
            : await client.query<{ token: string }>(
                `INSERT INTO ${s}.stream_owners (stream_id, token, owner, expires_at, backend_pid) VALUES ($1, 1, $2::json, ${expires}, pg_backend_pid())
                 ON CONFLICT (stream_id) DO NOTHING RETURNING token`,
                [streamId, JSON.stringify(owner), ttlMs],
              );
          if (taken.rows.length === 0) return await busy(client, streamId);
          const token = Number(taken.rows[0].token);
          held.set(streamId, { token, client, locked });
          kept = true;
          return lease(streamId, token, ttlMs, sentAt);
        } finally {
          if (locked && !kept) {
            await client
              .query(`SELECT pg_advisory_unlock(${key})`, [schema, streamId])
              .catch(ignoreError("unlocking after a refused or failed acquire; the lock ends with its connection, the acquire's error is thrown"));
          }
        }
      });
    },
    async isOwnedElsewhere(streamId) {
      if (held.has(streamId)) return false;
      await options.ready;
      // The same rule as acquire: a row naming a live owner (not this process), or a lock held elsewhere on a stream without a row. The lock is
      // looked up in pg_locks, not tried: a probe that took it, even for a statement, made a first acquire elsewhere find it held and refuse.
      const probe = await pool.query<{ held: boolean; live: boolean | null }>(
        `SELECT EXISTS (
                  SELECT 1 FROM pg_locks l, (SELECT ${key} AS k) AS h
                  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND l.classid::bigint = ((h.k >> 32) & 4294967295) AND l.objid::bigint = (h.k & 4294967295)
                ) AS held,
                (SELECT ${liveOwner("$3::integer")} FROM ${s}.stream_owners o WHERE o.stream_id = $2) AS live`,
        [schema, streamId, lockClient?.pid ?? null],
      );
      const { held: locked, live } = probe.rows[0];
      return live === true || (live === null && locked);
    },
    tokenOf(streamId) {
      return held.get(streamId)?.token;
    },
    fencesAppends: true,
    async close() {
      await queue;
      held.clear();
      const client = lockClient?.client;
      lockClient = undefined;
      if (client) {
        await client.end().catch(ignoreError("ending the lock connection at close; the locks end with it, and its rows name a gone backend"));
      }
    },
  };

  function lease(streamId: string, token: number, ttlMs: number, takenAt: number): StreamLease {
    let released = false;
    let renewedAt = takenAt;
    const lost = (why: string) =>
      new LeaseLostError(`The lease of stream "${streamId}" (token ${token}) is lost: ${why}; another process may have taken its run over.`, { details: { streamId, token } });
    return {
      streamId,
      token,
      ttlMs,
      get renewedAt() {
        return renewedAt;
      },
      renew() {
        return serialized(async () => {
          const mine = held.get(streamId);
          if (released || mine?.token !== token) throw lost("it was released");
          const { client } = mine;
          if (lockClient?.client !== client) throw lost("the connection its row names is gone");
          const sentAt = Date.now();
          const renewed = await client
            .query(`UPDATE ${s}.stream_owners SET expires_at = now() + make_interval(secs => $3::double precision / 1000) WHERE stream_id = $1 AND token = $2`, [streamId, token, ttlMs])
            .catch((error: unknown) => {
              throw lost(`its renewal failed (${error instanceof Error ? error.message : String(error)})`);
            });
          if (renewed.rowCount !== 1) throw lost("the stream has a newer owner");
          renewedAt = sentAt;
          if (!mine.locked) {
            // Taken over while the old owner held the lock: take it once that owner let it go.
            mine.locked = await client
              .query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${key}) AS ok`, [schema, streamId])
              .then((result) => result.rows[0].ok, ignoreError("the lock of a lease taken over is tried again at its next renewal", false));
          }
        });
      },
      release() {
        if (released) return Promise.resolve();
        released = true;
        return serialized(async () => {
          const mine = held.get(streamId);
          if (mine?.token !== token) return;
          held.delete(streamId);
          if (lockClient?.client !== mine.client) return; // its connection is gone, with its lock; the row names a gone backend
          // Expired for its own token only (a newer owner's row stays), and no backend named: the stream is free at once.
          const expire = (stream: string, tokenParam: string) =>
            `UPDATE ${s}.stream_owners SET expires_at = now(), backend_pid = NULL WHERE stream_id = ${stream} AND token = ${tokenParam}`;
          await (mine.locked
            ? mine.client.query(`WITH released AS (${expire("$2", "$3")}) SELECT pg_advisory_unlock(${key})`, [schema, streamId, token])
            : mine.client.query(expire("$1", "$2"), [streamId, token])
          ).catch(ignoreError("a failed release: the lock ends with its connection, the token was already dropped, the row lapses at its TTL"));
        });
      },
    };
  }
  return ownership;
}

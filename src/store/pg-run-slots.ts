/**
 * Run slots counted in PostgreSQL, so a per-tenant concurrency limit holds across the replicas
 * that share a database (`src/http/run-slots.ts`).
 *
 * Contract (ours):
 * - slot `i` of tenant `t` is the session-level advisory lock `(hashtext('arbor.run-slot:' || t), i)`,
 *   taken with `pg_try_advisory_lock` on one dedicated connection of this store; a release unlocks
 *   it; a replica that dies (kill -9, a lost connection) loses its connection and with it its
 *   locks, so its slots come free without any cleanup;
 * - `tryAcquire` never waits for a lock; calls are serialised on the store's connection; the
 *   slots this store holds are tracked here too (an advisory lock is re-entrant for its session).
 *
 * @example
 * ```ts
 * const store = createPostgresRunSlotStore({ connectionString: process.env.ARBOR_DB! });
 * const slots = createRunSlots({ maxConcurrentRuns: 2, store });
 * ```
 */
import pg from "pg";

/** A store of run slots: takes one of `max` slots of `tenant` without waiting, or gives undefined. */
export interface PostgresRunSlotStore {
  tryAcquire(tenant: string, max: number): Promise<(() => Promise<void>) | undefined>;
  /** Ends the store's connection (every slot it holds comes free). */
  close(): Promise<void>;
}

/**
 * Creates the store on its own connection (opened on first use).
 *
 * @example
 * ```ts
 * const store = createPostgresRunSlotStore({ connectionString: "postgres://postgres@127.0.0.1/test" });
 * ```
 */
export function createPostgresRunSlotStore(options: { connectionString: string }): PostgresRunSlotStore {
  let client: Promise<pg.Client> | undefined;
  // A session-level advisory lock is re-entrant for its session: slots this store holds are skipped here.
  const held = new Set<string>();
  let chain: Promise<unknown> = Promise.resolve();
  const connect = () =>
    (client ??= (async () => {
      const made = new pg.Client({ connectionString: options.connectionString, keepAlive: true });
      made.on("error", () => undefined);
      await made.connect();
      return made;
    })());
  const serial = <T>(work: (db: pg.Client) => Promise<T>): Promise<T> => {
    const next = chain.then(async () => work(await connect()));
    chain = next.catch(() => undefined);
    return next;
  };
  return {
    tryAcquire(tenant, max) {
      return serial(async (db) => {
        for (let slot = 0; slot < max; slot++) {
          const key = `${tenant}\u0000${slot}`;
          if (held.has(key)) continue;
          const { rows } = await db.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext('arbor.run-slot:' || $1), $2) AS ok", [tenant, slot]);
          if (rows[0]?.ok) {
            held.add(key);
            let released = false;
            return async () => {
              if (released) return;
              released = true;
              held.delete(key);
              await serial((db) => db.query("SELECT pg_advisory_unlock(hashtext('arbor.run-slot:' || $1), $2)", [tenant, slot]));
            };
          }
        }
        return undefined;
      });
    },
    async close() {
      const made = client;
      client = undefined;
      if (made) await (await made).end().catch(() => undefined);
    },
  };
}

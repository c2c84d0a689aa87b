/**
 * Run slots counted in PostgreSQL (ours), so a per-tenant concurrency limit holds across replicas (`src/http/run-slots.ts`): slot `i` of tenant
 * `t` is a session-level advisory lock on one dedicated connection, freed when its replica's connection dies. `tryAcquire` never waits.
 */
import pg from "pg";
import { ignoreError } from "../../core/ignored.ts";

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
      made.on("error", ignoreError("the run-slot connection failed; its slots came free with it"));
      await made.connect();
      return made;
    })());
  const serial = <T>(work: (db: pg.Client) => Promise<T>): Promise<T> => {
    const next = chain.then(async () => work(await connect()));
    chain = next.catch(ignoreError("a failed slot call rejects its own caller; the chain goes on"));
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
      if (made) await (await made).end().catch(ignoreError("ending the run-slot connection at close; every slot comes free with it"));
    },
  };
}

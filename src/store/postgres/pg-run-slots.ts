/**
 * Run slots counted in PostgreSQL (ours), so a per-tenant concurrency limit holds across replicas (`src/http/run-slots.ts`): slot `i` of tenant
 * `t` is a session-level advisory lock on one dedicated connection, freed when its replica's connection dies. `tryAcquire` never waits.
 * The lock's key is 64 bits of SHA-256 of the tenant and slot (a 32-bit `hashtext` made tenants collide by the tens of thousands). A connection
 * that fails (a restart, an administrator's `pg_terminate_backend`) freed its slots with it: the store forgets them, so releasing one is a no-op,
 * and the next call opens a new connection.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { ignoreError } from "../../core/ignored.ts";

/** The advisory lock key of slot `slot` of `tenant`: a signed 64-bit integer, as decimal text for a `bigint` parameter. */
function slotKey(tenant: string, slot: number): string {
  return createHash("sha256").update(`arbor.run-slot\0${tenant}\0${slot}`, "utf8").digest().readBigInt64BE(0).toString();
}

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
  /** The current connection; each one has its own set of held slots (a session-level advisory lock is re-entrant: held slots are skipped). */
  let current: { client: Promise<pg.Client>; held: Set<string> } | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  const connect = (): { client: Promise<pg.Client>; held: Set<string> } => {
    if (current) return current;
    const made = new pg.Client({ connectionString: options.connectionString, keepAlive: true });
    const held = new Set<string>();
    const forget = () => {
      // Its slots came free with it: the next call connects again.
      if (current?.held === held) current = undefined;
      held.clear();
    };
    made.on("error", (error) => {
      forget();
      ignoreError("the run-slot connection failed; its slots came free with it, and the next call connects again")(error);
    });
    made.on("end", forget);
    const client = made.connect().then(
      () => made,
      (error: unknown) => {
        forget();
        throw error;
      },
    );
    current = { client, held };
    return current;
  };
  const serial = <T>(work: (db: pg.Client, held: Set<string>) => Promise<T>): Promise<T> => {
    const next = chain.then(async () => {
      const connection = connect();
      try {
        return await work(await connection.client, connection.held);
      } catch (error) {
        // A connection that can no longer be queried is dropped (its `error` event may come later, or never).
        if (connection === current && !isQueryError(error)) {
          current = undefined;
          connection.held.clear();
          void connection.client.then((client) => client.end()).catch(ignoreError("ending a run-slot connection that failed; its slots came free with it"));
        }
        throw error;
      }
    });
    chain = next.catch(ignoreError("a failed slot call rejects its own caller; the chain goes on"));
    return next;
  };
  const tryOnce = (tenant: string, max: number) =>
    serial(async (db, held) => {
      for (let slot = 0; slot < max; slot++) {
        const key = slotKey(tenant, slot);
        if (held.has(key)) continue;
        const { rows } = await db.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS ok", [key]);
        if (rows[0]?.ok) {
          held.add(key);
          let released = false;
          return async () => {
            if (released) return;
            released = true;
            // Taken on a connection that has failed since: the slot came free with it.
            if (!held.delete(key)) return;
            await serial((db) => db.query("SELECT pg_advisory_unlock($1::bigint)", [key]));
          };
        }
      }
      return undefined;
    });
  return {
    async tryAcquire(tenant, max) {
      try {
        return await tryOnce(tenant, max);
      } catch (error) {
        // Once more on a new connection when the old one had failed; a query error (or a second failure) is the caller's.
        if (isQueryError(error)) throw error;
        return tryOnce(tenant, max);
      }
    },
    async close() {
      const connection = current;
      current = undefined;
      if (connection) await connection.client.then((client) => client.end()).catch(ignoreError("ending the run-slot connection at close; every slot comes free with it"));
    },
  };
}

/** True for an error the server answered a query with (the connection is fine); false for a lost or unusable connection. */
function isQueryError(error: unknown): boolean {
  return error instanceof pg.DatabaseError && !String(error.code).startsWith("57P") && !String(error.code).startsWith("08");
}

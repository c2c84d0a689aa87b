/**
 * Run slots in PostgreSQL (`createPostgresRunSlotStore`, the per-tenant `maxConcurrentRuns` across replicas): the store keeps working after its
 * connection is ended by an administrator (the slots it held came free, a release of one is a no-op, the next acquire connects again), and two
 * tenants never share slots, also tenants whose 32-bit `hashtext` collides. The real PostgreSQL.
 */
import { createHash, randomBytes } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresRunSlotStore, type PostgresRunSlotStore } from "../../src/store/postgres/pg-run-slots.ts";
import { PG_URL, testClient } from "./pg-test-db.ts";

let admin: pg.Client;
const stores: PostgresRunSlotStore[] = [];
const store = () => {
  const made = createPostgresRunSlotStore({ connectionString: PG_URL });
  stores.push(made);
  return made;
};
beforeAll(async () => {
  admin = await testClient();
});
afterAll(async () => {
  for (const made of stores) await made.close();
  await admin.end();
});

/** The backend holding tenant's slot `slot` (the lock key as the store computes it, split as `pg_locks` shows a bigint key). */
async function holderOf(tenant: string, slot: number): Promise<number | undefined> {
  const key = createHash("sha256").update(`arbor.run-slot\0${tenant}\0${slot}`, "utf8").digest().readBigUInt64BE(0);
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid::bigint = $1 AND objid::bigint = $2",
    [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
  );
  return rows[0]?.pid;
}

describe("PostgreSQL run slots", () => {
  it("keep working after an administrator ends the slot connection: its slots came free, the next acquire connects again", async () => {
    const tenant = `slots-${randomBytes(4).toString("hex")}`;
    const slots = store();
    const first = await slots.tryAcquire(tenant, 2);
    const second = await slots.tryAcquire(tenant, 2);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(await slots.tryAcquire(tenant, 2)).toBeUndefined();
    const pid = await holderOf(tenant, 0);
    expect(pid).toBeGreaterThan(0);
    expect((await admin.query("SELECT pg_terminate_backend($1) AS ok", [pid])).rows[0].ok).toBe(true);
    // The backend releases its locks as it exits: wait for it to be gone.
    while ((await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).rowCount) await new Promise((resolve) => setImmediate(resolve));

    // Both slots came free with the connection: two acquires succeed on a new one, a third is refused.
    const again = [await slots.tryAcquire(tenant, 2), await slots.tryAcquire(tenant, 2)];
    expect(again.every((release) => release !== undefined)).toBe(true);
    expect(await slots.tryAcquire(tenant, 2)).toBeUndefined();
    expect(await holderOf(tenant, 0)).not.toBe(pid);
    // Releasing a slot taken on the ended connection frees nothing of the new one's.
    await first!();
    expect(await slots.tryAcquire(tenant, 2)).toBeUndefined();
    await again[0]!();
    expect(await slots.tryAcquire(tenant, 2)).toBeDefined();
  });

  it("two tenants never share a slot, also when their 32-bit hashtext collides", async () => {
    const { rows } = await admin.query<{ tenants: string[] }>(
      "SELECT array_agg(t) AS tenants FROM (SELECT 't' || i AS t, hashtext('arbor.run-slot:' || 't' || i) AS h FROM generate_series(1, 300000) i) x GROUP BY h HAVING count(*) > 1 LIMIT 1",
    );
    const [a, b] = rows[0].tenants;
    const releaseA = await store().tryAcquire(a, 1);
    const releaseB = await store().tryAcquire(b, 1);
    expect(releaseA).toBeDefined();
    expect(releaseB).toBeDefined();
    await releaseA!();
    await releaseB!();
  }, 60_000);
});

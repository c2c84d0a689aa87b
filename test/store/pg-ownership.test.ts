/**
 * One writer per stream across processes on PostgreSQL: the owner row naming the
 * owner's connection (and the advisory lock it holds), the fencing token every append
 * of the owner carries, takeover at once after the owner's connection is lost or its
 * process is SIGKILLed, and takeover of one lapsed lease that leaves the other leases
 * of its process alone (two logs on one schema stand for two processes).
 */
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LeaseLostError, SessionBusyError } from "../../src/core/errors.ts";
import { createPostgresEventLog, type PostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { spawnTsx } from "./child-process.ts";
import { notes, testRegistry } from "./event-log.contract.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const newSchema = useTestSchemas("own");
let admin: pg.Client;
const logs: PostgresEventLog[] = [];
const openLog = (schema: string) => {
  const log = createPostgresEventLog({ connectionString: PG_URL, schema, registry: testRegistry(), poolSize: 1 });
  logs.push(log);
  return log;
};
beforeAll(async () => {
  admin = await testClient();
});
afterAll(async () => {
  await admin.end();
});
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
});

/** Retries `acquire` while the old owner's lock is still held (the server ends a dead backend asynchronously). */
async function acquireWhenFree(log: PostgresEventLog, streamId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await log.ownership.acquire(streamId, { test: true });
    } catch (error) {
      if (!SessionBusyError.isInstance(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Polls `condition` until it holds (for a lease's TTL to lapse, or the server to end a backend). */
async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Ends the backend that the stream's owner row names (its owner's lock connection), as a lost network would. */
async function endOwnerBackend(schema: string, streamId: string): Promise<void> {
  const ended = await admin.query<{ ended: boolean }>(`SELECT pg_terminate_backend(backend_pid) AS ended FROM "${schema}".stream_owners WHERE stream_id = $1`, [streamId]);
  expect(ended.rows).toEqual([{ ended: true }]);
}

/** True while a backend holds the stream's advisory lock. */
async function lockHeld(schema: string, streamId: string): Promise<boolean> {
  const held = await admin.query(
    `SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1 || ':' || $2, 0)`,
    [schema, streamId],
  );
  return held.rowCount === 1;
}

describe("PostgreSQL stream ownership", () => {
  it("refuses a second owner with SessionBusyError until the first releases; tokens increase", async () => {
    const schema = newSchema();
    const first = openLog(schema);
    const second = openLog(schema);
    const lease = await first.ownership.acquire("session-a", { pid: 1 });
    expect(lease.token).toBe(1);
    const busy = await second.ownership.acquire("session-a").catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(busy)).toBe(true);
    expect((busy as Error).message).toMatch(/owned by another live process \(\{"pid":1\}\)/);
    expect(await second.ownership.isOwnedElsewhere("session-a")).toBe(true);
    expect(await first.ownership.isOwnedElsewhere("session-a")).toBe(false);
    await expect(first.ownership.acquire("session-a")).rejects.toThrow(/already owned by this process/);
    // Other streams are free.
    expect((await second.ownership.acquire("session-b")).token).toBe(1);
    await first.append("session-a", notes(1));
    await lease.release();
    expect(await second.ownership.isOwnedElsewhere("session-a")).toBe(false);
    expect((await second.ownership.acquire("session-a")).token).toBe(2);
  });

  it("fences out an owner whose connection was lost: its appends fail and write nothing, the new owner's go through", async () => {
    const schema = newSchema();
    const old = openLog(schema);
    const next = openLog(schema);
    // A TTL far past the test's timeout: the taker must not wait for it.
    await old.ownership.acquire("session-a", {}, { ttlMs: 600_000 });
    await old.append("session-a", notes(2, "old"), { expectedVersion: "no_stream" });
    // The old owner's lock connection dies (network loss); its process lives on.
    const killed = await admin.query(
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
         AND l.pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())
         AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1 || ':' || 'session-a', 0)`,
      [schema],
    );
    expect(killed.rowCount).toBe(1);
    const lease = await acquireWhenFree(next, "session-a", 10_000);
    expect(lease.token).toBe(2);
    const fenced = await old.append("session-a", notes(1, "stale"), { expectedVersion: 2 }).catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(fenced)).toBe(true);
    expect(fenced).toMatchObject({ details: { fenced: true, token: 2, ownToken: 1 } });
    await next.append("session-a", notes(1, "new"), { expectedVersion: 2 });
    const texts = (await next.readStream("session-a")).map((event) => (event.data as { text: string }).text);
    expect(texts).toEqual(["old0", "old1", "new0"]);
  });

  it("lets another process take over once the owning process is SIGKILLed", async () => {
    const schema = newSchema();
    const log = openLog(schema);
    await log.headPosition();
    const child = spawnTsx("test/store/fixtures-pg/pg-child.ts", [PG_URL, schema, "own", "session-a"]);
    expect(await child.nextLine()).toBe("owned 1");
    await expect(log.ownership.acquire("session-a")).rejects.toThrow(SessionBusyError);
    child.process.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");
    const lease = await acquireWhenFree(log, "session-a");
    expect(lease.token).toBe(2);
  }, 60_000);

  it("takes over one lapsed lease by its token alone: the holder's other leases, and its connection, stay", async () => {
    const schema = newSchema();
    const a = openLog(schema);
    const b = openLog(schema);
    const c = openLog(schema);
    const ttlMs = 1_000;
    const s1 = await a.ownership.acquire("s1", { process: "a" }, { ttlMs });
    const s2 = await a.ownership.acquire("s2", { process: "a" }, { ttlMs });
    await a.append("s1", notes(1, "a"), { expectedVersion: "no_stream" });
    // A renews s2 only (its heartbeat), until s1 has lapsed.
    await waitFor(async () => {
      await s2.renew();
      return !(await b.ownership.isOwnedElsewhere("s1"));
    }, "s1 to lapse");
    expect(await b.ownership.isOwnedElsewhere("s2")).toBe(true);
    const taken = await b.ownership.acquire("s1", { process: "b" }, { ttlMs: 600_000 });
    expect(taken.token).toBe(2);

    // A's other lease is untouched: it renews, and B sees s2 owned and cannot take it.
    await s2.renew();
    await a.append("s2", notes(1, "a2"), { expectedVersion: "no_stream" });
    expect(await b.ownership.isOwnedElsewhere("s2")).toBe(true);
    const busy = await b.ownership.acquire("s2").catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(busy)).toBe(true);
    expect((busy as Error).message).toMatch(/owned by another live process \(\{"process":"a"\}\)/);

    // A is fenced out of s1 only: its renewal is LeaseLostError, its append is refused and writes nothing.
    await expect(s1.renew()).rejects.toSatisfy((error: unknown) => LeaseLostError.isInstance(error));
    const fenced = await a.append("s1", notes(1, "stale"), { expectedVersion: 1 }).catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(fenced)).toBe(true);
    expect(fenced).toMatchObject({ details: { fenced: true, token: 2, ownToken: 1 } });
    await b.append("s1", notes(1, "b"), { expectedVersion: 1 });
    expect((await c.readStream("s1")).map((event) => (event.data as { text: string }).text)).toEqual(["a0", "b0"]);

    // A lets its lock go; B's lease holds without it, and B's next renewal takes it.
    await s1.release();
    expect(await a.ownership.isOwnedElsewhere("s1")).toBe(true);
    expect(await c.ownership.isOwnedElsewhere("s1")).toBe(true);
    await expect(c.ownership.acquire("s1")).rejects.toThrow(/owned by another live process \(\{"process":"b"\}\)/);
    await taken.renew();
    expect(await lockHeld(schema, "s1")).toBe(true);
    await s2.renew();

    // B's release frees s1 at once, long before its TTL.
    await taken.release();
    expect(await lockHeld(schema, "s1")).toBe(false);
    expect(await c.ownership.isOwnedElsewhere("s1")).toBe(false);
    expect((await c.ownership.acquire("s1")).token).toBe(3);
  });

  it("takes a lease over at once when the backend its row names is gone, even while a fenced-out owner still holds the lock", async () => {
    const schema = newSchema();
    const a = openLog(schema);
    const b = openLog(schema);
    const c = openLog(schema);
    const s1 = await a.ownership.acquire("s1", { process: "a" }, { ttlMs: 500 });
    await waitFor(async () => !(await b.ownership.isOwnedElsewhere("s1")), "s1 to lapse");
    // B takes s1 over while A still holds its lock, then B's connection is lost (a long TTL it will not wait for).
    expect((await b.ownership.acquire("s1", { process: "b" }, { ttlMs: 600_000 })).token).toBe(2);
    expect(await c.ownership.isOwnedElsewhere("s1")).toBe(true);
    await endOwnerBackend(schema, "s1");
    expect(await lockHeld(schema, "s1")).toBe(true);
    await waitFor(async () => !(await c.ownership.isOwnedElsewhere("s1")), "B's backend to end");
    expect((await acquireWhenFree(c, "s1", 5_000)).token).toBe(3);
    await expect(s1.renew()).rejects.toSatisfy((error: unknown) => LeaseLostError.isInstance(error));
  });

  it("a probe from another process never makes a free stream's first acquire refuse (isOwnedElsewhere takes no lock)", async () => {
    const schema = newSchema();
    const prober = openLog(schema);
    const taker = openLog(schema);
    let refused = 0;
    for (let index = 0; index < 150; index++) {
      const streamId = `probed-${index}`;
      let probing = true;
      const probes = (async () => {
        while (probing) await prober.ownership.isOwnedElsewhere(streamId);
      })();
      const lease = await taker.ownership.acquire(streamId, { index }).catch((error: unknown) => {
        if (!SessionBusyError.isInstance(error)) throw error;
        refused += 1;
        return undefined;
      });
      probing = false;
      await probes;
      if (lease) {
        expect(await prober.ownership.isOwnedElsewhere(streamId)).toBe(true);
        await lease.release();
        expect(await prober.ownership.isOwnedElsewhere(streamId)).toBe(false);
      }
    }
    expect(refused).toBe(0);
  }, 120_000);
});

/**
 * One writer per stream across processes on PostgreSQL: the advisory lock held by
 * the owner's connection, the fencing token every append of the owner carries,
 * takeover after the owner's connection is lost or its process is SIGKILLed.
 */
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SessionBusyError } from "../../src/core/errors.ts";
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
    await old.ownership.acquire("session-a");
    await old.append("session-a", notes(2, "old"), { expectedVersion: "no_stream" });
    // The old owner's lock connection dies (network loss); its process lives on.
    const killed = await admin.query(
      `SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
         AND l.pid IN (SELECT pid FROM pg_stat_activity WHERE datname = current_database())
         AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1 || ':' || 'session-a', 0)`,
      [schema],
    );
    expect(killed.rowCount).toBe(1);
    const lease = await acquireWhenFree(next, "session-a");
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
});

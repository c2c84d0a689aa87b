/**
 * A run's lease is timed from when the log's taking statement was sent, not from when the run asked for it. On PostgreSQL every lock call of a
 * process goes through its one lock connection, one at a time: when many runs start at once (a worker given ten sessions), the last acquire waits
 * behind the others. That wait must not count against the lease's TTL, or the run is fenced out (`LEASE_LOST`) by its own process the moment it
 * starts. Here another stream's acquire is held on a row lock for twice the TTL, so the run's acquire queues behind it.
 */
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createRunOwnership } from "../../src/machines/run-ownership.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const newSchema = useTestSchemas("leaseq");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TTL_MS = 400;

/** Polls until a backend of `schema`'s lock calls waits on a row lock (the blocked acquire is on the server). */
async function untilWaitingOnLock(admin: pg.Client, schema: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const waiting = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%"${schema}".stream_owners%`]);
    if (waiting.rows.length > 0) return;
    if (Date.now() > deadline) throw new Error("the blocked acquire never reached the server");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("run lease queued behind this process's other lock calls", () => {
  it("is not fenced out when its acquire waited longer than its TTL before it was sent (PostgreSQL)", async () => {
    const schema = newSchema();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    closers.push(() => log.close());
    const admin = await testClient();
    closers.push(() => admin.end());
    const repository = createSessionRepository({ log });
    const session = await repository.open((await repository.create({ cwd: "/tmp" })).id);

    // Another stream with an owner row, then that row locked by another connection: its next acquire blocks on the server.
    await (await log.ownership.acquire("stream-blocker", { test: true })).release();
    await admin.query("BEGIN");
    await admin.query(`SELECT * FROM "${schema}".stream_owners WHERE stream_id = 'stream-blocker' FOR UPDATE`);
    const blocked = log.ownership.acquire("stream-blocker", { test: true }, { ttlMs: 60_000 });
    await untilWaitingOnLock(admin, schema);

    // The run asks for its lease now; its acquire waits in this process's queue behind the blocked one.
    const ownership = createRunOwnership(session, { ttlMs: TTL_MS });
    closers.push(() => ownership.release());
    const taken = ownership.take();
    // The condition under test is elapsed time: twice the TTL passes before the queue moves.
    await new Promise((resolve) => setTimeout(resolve, 2 * TTL_MS));
    await admin.query("COMMIT");
    closers.push(async () => (await blocked).release());
    await taken;

    // Taken just now on the server: the lease is live.
    expect(ownership.fence()).toBeUndefined();
    const appended = await session.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: "still the owner" }], timestamp: Date.now() } } as never);
    expect(appended).toBeDefined();
  });
});

/**
 * A worker's claim of a task holds for as long as the task runs, not one TTL: the claim's lease
 * is renewed every third of its TTL until the worker lets it go. Without the heartbeat, a task
 * that ran longer than the TTL was taken over by another worker, which on PostgreSQL also ended
 * the connection that held every lock of the first worker's process (its runs' leases too).
 * Two PostgreSQL logs of this process stand in for two workers' processes (each holds its locks
 * on its own connection).
 */
import { afterEach, describe, expect, it } from "vitest";
import { SessionBusyError } from "../../src/core/errors.ts";
import { claimTask, releaseHold } from "../../src/harness/task-claims.ts";
import { createPostgresEventLog, type PostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { queueTask, readTask } from "../../src/store/task-queue.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const newSchema = useTestSchemas("claim");
const logs: PostgresEventLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
});
const openLog = (schema: string) => {
  const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
  logs.push(log);
  return log;
};

describe("a task's claim (PostgreSQL)", () => {
  it("stays held past its TTL while the task runs, and is free once the worker lets it go", async () => {
    const schema = newSchema();
    const worker = openLog(schema);
    const other = openLog(schema);
    const queued = await queueTask(worker, { sessionId: "s-claims", input: "a long task" });
    const claimed = await claimTask(worker, (await readTask(worker, queued.taskId))!, "worker-1", { ttlMs: 300 });
    expect(claimed).toBeDefined();
    // The task runs for several TTLs.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await other.ownership.isOwnedElsewhere(queued.streamId)).toBe(true);
    await expect(other.ownership.acquire(queued.streamId)).rejects.toThrow(SessionBusyError);
    // The first worker's lock connection is intact: its claim's lease still renews.
    await claimed!.lease!.renew();
    await releaseHold(claimed!);
    expect(await other.ownership.isOwnedElsewhere(queued.streamId)).toBe(false);
    const lease = await other.ownership.acquire(queued.streamId);
    expect(lease.token).toBe(2);
  });
});

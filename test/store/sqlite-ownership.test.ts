/**
 * One writer per stream among the processes of one host on one SQLite file: the owner row with
 * a TTL (`stream_leases`), the heartbeat, takeover of a dead or expired owner, and the token check
 * of every append of a holder that was taken over. Two logs of this process stand in for two
 * processes; the owner row names a real other live process (this test's parent) or a real dead
 * one (a child that exited), since an owner of this same process never counts as live.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { LeaseLostError, SessionBusyError } from "../../src/core/errors.ts";
import { processStartOf } from "../../src/core/process-group.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { tempDbPath } from "../machines/helpers.ts";
import { notes, testRegistry } from "./event-log.contract.ts";

const logs: EventLog[] = [];
const openLog = (path: string) => {
  const log = createSqliteEventLog({ path, registry: testRegistry() });
  logs.push(log);
  return log;
};
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
});

/** Another live process of this host (the test runner's parent), as a run owner. */
const liveOther = () => ({ pid: process.ppid, host: hostname(), processStart: processStartOf(process.ppid) });
/** A process that existed and is gone. */
const deadOwner = () => {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return { pid: Number(child.stdout), host: hostname(), processStart: "1" };
};

/** Retries `acquire` while the other owner's lease holds, up to `timeoutMs`. */
async function acquireWhenFree(log: EventLog, streamId: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await log.ownership!.acquire(streamId, { test: true });
    } catch (error) {
      if (!SessionBusyError.isInstance(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

describe("SQLite stream ownership (one host)", () => {
  it("refuses a second owner while another live process holds an unexpired lease; tokens increase", async () => {
    const path = tempDbPath();
    const first = openLog(path);
    const second = openLog(path);
    const owner = liveOther();
    const lease = await first.ownership!.acquire("session-a", owner, { ttlMs: 60_000 });
    expect(lease.token).toBe(1);
    const busy = await second.ownership!.acquire("session-a").catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(busy)).toBe(true);
    expect(busy).toMatchObject({ details: { streamId: "session-a", owner, token: 1 } });
    expect(await second.ownership!.isOwnedElsewhere("session-a")).toBe(true);
    expect(await first.ownership!.isOwnedElsewhere("session-a")).toBe(false);
    await expect(first.ownership!.acquire("session-a")).rejects.toThrow(/already owned by this log/);
    // Other streams are free; the holder renews and appends.
    expect((await second.ownership!.acquire("session-b")).token).toBe(1);
    await lease.renew();
    await first.append("session-a", notes(1));
    await lease.release();
    expect(await second.ownership!.isOwnedElsewhere("session-a")).toBe(false);
    expect((await second.ownership!.acquire("session-a")).token).toBe(2);
  });

  it("an owner of this same process never holds the stream against another log of the process", async () => {
    const path = tempDbPath();
    const first = openLog(path);
    const second = openLog(path);
    await first.ownership!.acquire("session-a", { pid: process.pid, host: hostname(), processStart: processStartOf(process.pid) });
    expect(await second.ownership!.isOwnedElsewhere("session-a")).toBe(false);
  });

  it("a dead owner is taken over at once", async () => {
    const path = tempDbPath();
    const first = openLog(path);
    const second = openLog(path);
    await first.ownership!.acquire("session-a", deadOwner(), { ttlMs: 60_000 });
    expect(await second.ownership!.isOwnedElsewhere("session-a")).toBe(false);
    expect((await second.ownership!.acquire("session-a")).token).toBe(2);
  });

  it("a live owner that stopped renewing is taken over after its TTL; its renewal and its appends are then refused, writing nothing", async () => {
    const path = tempDbPath();
    const old = openLog(path);
    const next = openLog(path);
    const oldLease = await old.ownership!.acquire("task-a", liveOther(), { ttlMs: 300 });
    await old.append("task-a", notes(2, "old"));
    await expect(next.ownership!.acquire("task-a")).rejects.toThrow(SessionBusyError);
    // The holder is paused: no renewal. Once the TTL passed, the stream is free.
    const lease = await acquireWhenFree(next, "task-a");
    expect(lease.token).toBe(2);
    const renewal = await oldLease.renew().catch((error: unknown) => error);
    expect(LeaseLostError.isInstance(renewal)).toBe(true);
    // An append with no expected version (as a task stream's) is fenced by the token.
    const fenced = await old.append("task-a", notes(1, "stale")).catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(fenced)).toBe(true);
    expect(fenced).toMatchObject({ details: { fenced: true, token: 2, ownToken: 1 } });
    await next.append("task-a", notes(1, "new"));
    const texts = (await next.readStream("task-a")).map((event) => (event.data as { text: string }).text);
    expect(texts).toEqual(["old0", "old1", "new0"]);
  });

  it("a renewed lease outlives its TTL; closing the log frees its rows", async () => {
    const path = tempDbPath();
    const owner = openLog(path);
    const other = openLog(path);
    const lease = await owner.ownership!.acquire("session-a", liveOther(), { ttlMs: 300 });
    const until = Date.now() + 1_000;
    while (Date.now() < until) {
      await lease.renew();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await other.ownership!.isOwnedElsewhere("session-a")).toBe(true);
    await owner.close();
    expect(await other.ownership!.isOwnedElsewhere("session-a")).toBe(false);
    expect((await other.ownership!.acquire("session-a")).token).toBe(2);
  });
});

/**
 * Whether an open run is orphaned when its recorded owner has this process's pid and host but another
 * start time: a container restarted under the same hostname runs its service as the same pid (often 1),
 * so the new process must take the dead one's runs as orphaned and continue them, not as its own.
 */
import { mkdtempSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRunOrphaned, type OpenRun } from "../../src/harness/open-runs.ts";
import { currentRunOwner } from "../../src/machines/run-lease.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function openRun(owner: unknown): Promise<{ run: OpenRun; log: ReturnType<typeof createSqliteEventLog> }> {
  const log = createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-open-run-")), "arbor.db") });
  closers.push(() => log.close());
  const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
  const streamId = sessionStreamId(session.id);
  return { log, run: { sessionId: session.id, streamId, runId: "run-1", owner, status: "open", waiting: [] } };
}

describe("an open run's owner", () => {
  it("with this pid and host but an earlier start time is a dead process: the run is orphaned", async () => {
    const self = currentRunOwner();
    // Linux records the kernel start time; elsewhere pid and host are all there is to compare.
    expect(self.processStart, "this test needs /proc (Linux)").toMatch(/^\d+$/);
    const { log, run } = await openRun({ pid: self.pid, host: hostname(), processStart: String(Number(self.processStart) - 1) });
    expect(await isRunOrphaned(log, run)).toBe(true);
  });

  it("that is this very process is never orphaned", async () => {
    const { log, run } = await openRun({ ...currentRunOwner() });
    expect(await isRunOrphaned(log, run)).toBe(false);
  });

  it("that is a process of another host is orphaned once no lease holds its session", async () => {
    const { log, run } = await openRun({ pid: 1, host: `${hostname()}-elsewhere`, processStart: "1" });
    expect(await isRunOrphaned(log, run)).toBe(true);
  });
});

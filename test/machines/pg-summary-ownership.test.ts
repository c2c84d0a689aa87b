/**
 * Issue 10 item 4: summary recovery decides "is the owner gone?" with the same ownership
 * abstraction as run recovery. On PostgreSQL that is the stream's lease, not the pid: an open
 * summary intent is left alone while another log (another process or host) holds the session,
 * and closed as interrupted once nobody does. Two logs in this process stand for two processes:
 * the intent's `metadata.owner` names this very pid, which the pid check alone would call dead.
 */
import { afterAll, describe, expect, it } from "vitest";
import { recoverSession } from "../../src/machines/recovery.ts";
import { currentRunOwner } from "../../src/machines/run-lease.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const schema = useTestSchemas("sumown");
const logs: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const log of logs) await log.close();
});

describe("summary recovery on PostgreSQL", () => {
  it("leaves an intent alone while another log holds the session, closes it once the lease is gone", async () => {
    const name = schema();
    const logA = createPostgresEventLog({ connectionString: PG_URL, schema: name });
    const logB = createPostgresEventLog({ connectionString: PG_URL, schema: name });
    logs.push(logA, logB);
    const sessionA = await createSessionRepository({ log: logA }).create({ cwd: "/tmp" });
    const lease = await sessionA.ownership!.acquire({ ...currentRunOwner() });
    await sessionA.appendEvents([
      { type: "summary.started", data: { summaryId: "s1", kind: "compaction", reason: "manual", fromLeafId: null }, metadata: { owner: currentRunOwner() } },
    ]);
    const sessionB = await createSessionRepository({ log: logB }).open(sessionA.id);
    expect(sessionB.view.activity.summaries.map((item) => item.summaryId)).toEqual(["s1"]);
    // A holds the session: its summary call is live, whatever the pid says.
    const held = await recoverSession(sessionB);
    expect(held.interruptedSummaryIds).toBeUndefined();
    expect(sessionB.view.activity.summaries).toHaveLength(1);
    // A is gone (its lease released, as when its connection dies): B closes the intent, once.
    await lease.release();
    await sessionB.refresh();
    const closed = await recoverSession(sessionB);
    expect(closed.interruptedSummaryIds).toEqual(["s1"]);
    expect(sessionB.view.activity.summaries).toEqual([]);
    const ended = (await logB.readStream(`session-${sessionA.id}`)).filter((event) => event.type === "summary.ended");
    expect(ended.map((event) => (event.data as { status: string }).status)).toEqual(["interrupted"]);
    expect((await recoverSession(sessionB)).interruptedSummaryIds).toBeUndefined();
  });
});

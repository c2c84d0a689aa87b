/**
 * The one fold (issue 10 item 3): the activity reducer applied to a whole log equals the live
 * projection the session view keeps; it resumes from a stored state; and its readers (recovery,
 * the run lease, queue restore, approvals) get from it what the log says.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { approvalsOf, foldApprovals } from "../../src/machines/approval-fold.ts";
import { recoverSession } from "../../src/machines/recovery.ts";
import { findLiveRun, findLiveStreamRun } from "../../src/machines/run-lease.ts";
import { emptyActivity, foldActivity, foldActivityAll } from "../../src/store/session/session-activity.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteSnapshotStore } from "../../src/store/session/session-snapshots.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { appendUnfinishedRun, fakeModel, sessionEvents } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-activity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

const echo = defineTool({
  name: "echo",
  description: "echoes",
  parameters: z.object({ text: z.string() }),
  async execute(args) {
    return { content: [{ type: "text", text: args.text }] };
  },
});
const danger = defineTool({
  name: "danger",
  description: "needs approval",
  parameters: z.object({ text: z.string() }),
  needsApproval: true,
  async execute(args) {
    return { content: [{ type: "text", text: `did ${args.text}` }] };
  },
});

/** A real SQLite session that went through runs, a tool batch, queued messages and an approval. */
async function livedSession(name: string) {
  const path = join(dir, `${name}.db`);
  const log = createSqliteEventLog({ path });
  disposers.push(() => log.close());
  const repo = createSessionRepository({ log });
  const session = await repo.create({ cwd: "/tmp" });
  const model = fakeModel([
    { toolCalls: [{ id: "call_a", name: "echo", arguments: { text: "a" } }, { id: "call_b", name: "echo", arguments: { text: "b" } }], stopReason: "toolUse" },
    { text: "echoed both" },
    { toolCalls: [{ id: "call_d", name: "danger", arguments: { text: "rm" } }, { id: "call_e", name: "echo", arguments: { text: "e" } }], stopReason: "toolUse" },
  ]);
  const agent = createAgent({ session, model, tools: [echo, danger] });
  disposers.push(() => agent.dispose());
  expect((await agent.prompt("first")).status).toBe("done");
  const second = await agent.prompt("second");
  expect(second.status).toBe("suspended");
  // Queued while the run waits for approval: recorded as queue.changed, kept for the next run.
  agent.followUp("later please");
  await agent.waitForIdle();
  return { path, log, repo, session, agent };
}

describe("the activity fold", () => {
  it("applied to the whole log equals the live projection of the view (and of a reopened session)", async () => {
    const { log, repo, session } = await livedSession("live");
    const events = await sessionEvents(log, session.id);
    const folded = foldActivityAll(events);
    expect(folded).toEqual(session.view.activity);
    expect((await repo.open(session.id)).view.activity).toEqual(folded);
    // What the log says, read off the projection.
    expect(folded.version).toBe(events.at(-1)!.version);
    expect(folded.runs.map((run) => run.status)).toEqual(["done", "suspended"]);
    expect(folded.openRun).toBeUndefined();
    expect(folded.approvals).toMatchObject([{ toolCallId: "call_d", toolName: "danger", status: "pending", settled: false }]);
    expect(folded.queues.followUp.map((message) => JSON.stringify((message as { content: unknown }).content))).toEqual([JSON.stringify([{ type: "text", text: "later please" }])]);
    // The approval readers see the same records as folding the events.
    expect([...approvalsOf(session.view.activity)]).toEqual([...foldApprovals(events)]);
  });

  it("resumes from a stored state at any version: the same as folding from the start", async () => {
    const { log, session } = await livedSession("resume");
    const events = await sessionEvents(log, session.id);
    const whole = foldActivityAll(events);
    for (let split = 0; split <= events.length; split += 1) {
      const stored = JSON.parse(JSON.stringify(foldActivityAll(events.slice(0, split)))) as typeof whole;
      expect(foldActivityAll(events.slice(split), stored), `split at ${split}`).toEqual(whole);
    }
  });

  it("is pure: folding an event leaves the previous state as it was", async () => {
    const { log, session } = await livedSession("pure");
    let state = emptyActivity();
    for (const event of await sessionEvents(log, session.id)) {
      const before = JSON.stringify(state);
      const next = foldActivity(state, event);
      expect(JSON.stringify(state)).toBe(before);
      state = next;
    }
    expect(state).toEqual(session.view.activity);
  });

  it("a session restored from a projection snapshot has the same activity; a snapshot without one is not used", async () => {
    const { path, log, session } = await livedSession("snapshot");
    const snapshotPath = join(dir, "snapshot.snapshots.db");
    const snapshots = createSqliteSnapshotStore({ path: snapshotPath });
    disposers.push(() => snapshots.close());
    // Without the session index (it would serve the open): snapshots are the fast path of logs that have none.
    const { sessionIndex: _hidden, ...withoutIndex } = log;
    const repo = createSessionRepository({ log: withoutIndex, snapshots, checkpointEvery: 1 });
    await repo.open(session.id); // writes the checkpoint
    expect(snapshots.read(session.id)?.snapshot.activity).toEqual(session.view.activity);
    expect((await repo.open(session.id)).view.activity).toEqual(session.view.activity);
    // A snapshot written before the activity existed: dropped, and the session folded from the log.
    const db = new Database(snapshotPath);
    const row = db.prepare("SELECT state FROM session_snapshots WHERE session_id = ?").pluck().get(session.id) as string;
    const { activity: _, ...old } = JSON.parse(row) as Record<string, unknown>;
    db.prepare("UPDATE session_snapshots SET state = ? WHERE session_id = ?").run(JSON.stringify(old), session.id);
    db.close();
    const { sessionIndex: _alsoHidden, ...reopenedLog } = createSqliteEventLog({ path });
    const reopened = createSessionRepository({ log: reopenedLog, snapshots });
    const handle = await reopened.open(session.id);
    disposers.push(() => reopened.log.close());
    expect(handle.view.activity).toEqual(session.view.activity);
  });
});

describe("readers of the activity projection", () => {
  it("an unfinished run: recovery, the lease and queue restore read the open run from the view", async () => {
    const log = createSqliteEventLog({ path: join(dir, "unfinished.db") });
    disposers.push(() => log.close());
    const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
    await appendUnfinishedRun(session, "run-1", { provider: "p", modelId: "m", api: "a" });
    const open = session.view.activity.openRun!;
    expect(open).toMatchObject({ runId: "run-1", openTurn: { turnId: "t0", index: 0 }, results: ["c1"] });
    expect(open.calls.map((call) => call.id)).toEqual(["c1", "c2"]);
    // No owner recorded: nobody alive runs it, for the fold and for the stream-reading form alike.
    expect(await findLiveStreamRun(undefined, session.view.activity)).toBeUndefined();
    expect(findLiveRun(await sessionEvents(log, session.id))).toBeUndefined();
    const report = await recoverSession(session);
    expect(report).toMatchObject({ recovered: true, runId: "run-1", interruptedToolCallIds: ["c2"] });
    expect(session.view.activity.openRun).toBeUndefined();
    expect(session.view.activity.runs.at(-1)).toMatchObject({ runId: "run-1", status: "interrupted" });
    expect(session.view.activity).toEqual(foldActivityAll(await sessionEvents(log, session.id)));
    // Idempotent: the projection says the run is settled.
    expect(await recoverSession(session)).toMatchObject({ recovered: false, runId: "run-1" });
  });

  it("a run owned by another live process is live for the projection and for the stream-reading form", async () => {
    // A log without stream ownership: the run's owner pid decides.
    const log = createMemoryEventLog();
    disposers.push(() => log.close());
    const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
    // The test runner's parent process is alive and is not this process.
    const owner = { pid: process.ppid, host: hostname() };
    await session.appendEvents([{ type: "run.started", data: { runId: "run-x", kind: "prompt", model: { provider: "p", modelId: "m" } }, metadata: { runId: "run-x", owner } }]);
    const expected = { runId: "run-x", owner };
    expect(await findLiveStreamRun(undefined, session.view.activity)).toEqual(expected);
    expect(findLiveRun(await sessionEvents(log, session.id))).toEqual(expected);
    expect(await recoverSession(session)).toMatchObject({ recovered: false, liveRun: expected });
    // Stream ownership, when the log has it, decides instead of the pid.
    expect(await findLiveStreamRun({ isOwnedElsewhere: async () => false }, session.view.activity)).toBeUndefined();
  });

  it("on SQLite the owner row decides: an open run is live only while another live process holds an unexpired lease", async () => {
    const path = join(dir, "lease-owner.db");
    const log = createSqliteEventLog({ path });
    const other = createSqliteEventLog({ path });
    disposers.push(() => other.close(), () => log.close());
    const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
    const owner = { pid: process.ppid, host: hostname() };
    await session.appendEvents([{ type: "run.started", data: { runId: "run-x", kind: "prompt", model: { provider: "p", modelId: "m" } }, metadata: { runId: "run-x", owner } }]);
    // Its pid lives, but no lease holds the session: the run's process is not running it.
    expect(await findLiveStreamRun(session.ownership, session.view.activity)).toBeUndefined();
    await other.ownership!.acquire(`session-${session.id}`, owner, { ttlMs: 60_000 });
    expect(await findLiveStreamRun(session.ownership, session.view.activity)).toEqual({ runId: "run-x", owner });
    expect(await recoverSession(session)).toMatchObject({ recovered: false, liveRun: { runId: "run-x" } });
  });

  it("queue restore: a new agent gets the queues of the projection", async () => {
    const { log, session, agent } = await livedSession("queues");
    await agent.dispose();
    const queued = session.view.activity.queues;
    expect(queued).toEqual(foldActivityAll(await sessionEvents(log, session.id)).queues);
    const next = createAgent({ session, model: fakeModel([]) });
    disposers.push(() => next.dispose());
    await next.whenReady();
    expect(next.getState().followUpQueue).toEqual(queued.followUp);
  });
});

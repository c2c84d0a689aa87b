/**
 * Control requests from another process: a harness in this process runs a session on a shared
 * log (a PostgreSQL schema; a SQLite file); a child process writes `control.requested` events
 * with `requestControl`. A `steer` while a tool runs is queued into the run (the model's next
 * call gets it) and answered `control.ended { applied }`; an `approve` for a call waiting for
 * approval records the decision (`approval.ended { approved }`); a `stop` ends the run `aborted`;
 * a stop naming a run that already ended is left alone (no `control.ended`).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { repoRoot, tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const run = promisify(execFile);
const schema = useTestSchemas("ctl");

function waitFor(log: EventLog, streamId: string, predicate: (event: StoredEvent) => boolean): Promise<StoredEvent> {
  return new Promise((resolve, reject) => {
    const subscription = log.subscribe({ streamId }).subscribe({
      next: (event) => {
        if (!predicate(event)) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve(event);
      },
      error: reject,
    });
  });
}

describe.each([["PostgreSQL"], ["SQLite"]])("control requests from another process (%s)", (name) => {
  let harness: AgentHarness | undefined;
  let log: EventLog | undefined;
  afterEach(async () => {
    await harness?.close();
    await log?.close();
  });

  it("steer is queued into the running run, approve records the decision, stop aborts; each applied once", async () => {
    const pgSchema = schema();
    const db = name === "PostgreSQL" ? PG_URL : join(tempDir("arbor-control-"), "arbor.db");
    log = name === "PostgreSQL" ? createPostgresEventLog({ connectionString: PG_URL, schema: pgSchema }) : createSqliteEventLog({ path: db });
    const request = async (body: Record<string, unknown>) => (await run(process.execPath, ["--import", "tsx", join(repoRoot, "test/harness/control-request-child.ts"), db, pgSchema, JSON.stringify(body)], { cwd: repoRoot })).stdout.trim();
    let entered!: () => void;
    const inTool = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedModel([
      { toolCalls: [{ id: "c1", name: "wait", arguments: {} }] },
      { text: "Steered." },
      { toolCalls: [{ id: "c2", name: "guarded", arguments: {} }] },
      { text: "Approved and done." },
      { toolCalls: [{ id: "c3", name: "wait", arguments: {} }] },
    ]);
    let waits = 0;
    harness = await createHarness({
      eventLog: log,
      models: { main: model },
      requireApproval: ["guarded"],
      tools: [
        defineTool({ name: "wait", description: "Waits", parameters: z.object({}), execute: async (_input, context) => {
          waits++;
          entered();
          if (waits === 1) await gate;
          else await new Promise<void>((resolve) => context?.signal?.addEventListener("abort", () => resolve(), { once: true }));
          return { content: [{ type: "text", text: "waited" }] };
        } }),
        defineTool({ name: "guarded", description: "Needs approval", parameters: z.object({}), execute: async () => ({ content: [{ type: "text", text: "guarded ran" }] }) }),
      ],
    });
    const sessionId = harness.id;
    const streamId = `session-${sessionId}`;
    const controlEnded = (requestId: string) => waitFor(log!, `control-${sessionId}`, (event) => event.type === "control.ended" && (event.data as { requestId: string }).requestId === requestId);

    // steer while the tool runs
    const first = harness.prompt("start");
    await inTool;
    const steerId = await request({ action: "steer", sessionId, text: "Also check the logs." });
    expect((await controlEnded(steerId)).data).toMatchObject({ action: "steer", status: "applied" });
    release();
    expect((await first).status).toBe("done");
    const events = await log.readStream(streamId);
    expect(events.some((event) => event.type === "queue.changed" && JSON.stringify(event.data).includes("Also check the logs."))).toBe(true);

    // approve a call that waits for approval
    expect((await harness.prompt("guarded please")).status).toBe("suspended");
    const approveId = await request({ action: "approve", sessionId, toolCallId: "c2" });
    expect((await controlEnded(approveId)).data).toMatchObject({ action: "approve", status: "applied" });
    const approval = await waitFor(log, streamId, (event) => event.type === "approval.ended");
    expect(approval.data).toMatchObject({ toolCallId: "c2", status: "approved" });
    expect((await harness.continue()).status).toBe("done");

    // a stop naming a run that has ended is left alone (even when followed late); a stop of the running run ends it
    const ended = (await log.readStream(streamId)).filter((event) => event.type === "run.ended").at(-1)!;
    const idleStop = await request({ action: "stop", sessionId, runId: (ended.data as { runId: string }).runId });
    const third = harness.prompt("wait again");
    await waitFor(log, streamId, (event) => event.type === "tool.started" && (event.data as { toolCallId: string }).toolCallId === "c3");
    const stopId = await request({ action: "stop", sessionId });
    expect((await controlEnded(stopId)).data).toMatchObject({ action: "stop", status: "applied" });
    expect((await third).status).toBe("aborted");
    const control = await log.readStream(`control-${sessionId}`);
    expect(control.filter((event) => event.type === "control.ended").map((event) => (event.data as { requestId: string }).requestId)).toEqual([steerId, approveId, stopId]);
    expect(control.some((event) => event.eventId === idleStop)).toBe(true);
  }, 120_000);

  it("a stop also drops the steers and follow-ups the stopped run had not taken yet: the session is idle, and the next run does not get them", async () => {
    const pgSchema = schema();
    const db = name === "PostgreSQL" ? PG_URL : join(tempDir("arbor-control-"), "arbor.db");
    log = name === "PostgreSQL" ? createPostgresEventLog({ connectionString: PG_URL, schema: pgSchema }) : createSqliteEventLog({ path: db });
    const request = async (body: Record<string, unknown>) => (await run(process.execPath, ["--import", "tsx", join(repoRoot, "test/harness/control-request-child.ts"), db, pgSchema, JSON.stringify(body)], { cwd: repoRoot })).stdout.trim();
    const model = scriptedModel([{ toolCalls: [{ id: "c1", name: "wait", arguments: {} }] }, { text: "Fresh answer." }]);
    harness = await createHarness({
      eventLog: log,
      models: { main: model },
      tools: [
        defineTool({ name: "wait", description: "Waits until aborted", parameters: z.object({}), execute: async (_input, context) => {
          await new Promise<void>((resolve) => context?.signal?.addEventListener("abort", () => resolve(), { once: true }));
          return { content: [{ type: "text", text: "waited" }] };
        } }),
      ],
    });
    const sessionId = harness.id;
    const streamId = `session-${sessionId}`;
    const controlEnded = (requestId: string) => waitFor(log!, `control-${sessionId}`, (event) => event.type === "control.ended" && (event.data as { requestId: string }).requestId === requestId);

    const first = harness.prompt("start");
    await waitFor(log, streamId, (event) => event.type === "tool.started");
    const steerId = await request({ action: "steer", sessionId, text: "STALE-STEER-7d1e" });
    expect((await controlEnded(steerId)).data).toMatchObject({ action: "steer", status: "applied" });
    const followId = await request({ action: "followUp", sessionId, text: "STALE-FOLLOW-4b9a" });
    expect((await controlEnded(followId)).data).toMatchObject({ action: "followUp", status: "applied" });
    expect(harness.hasQueuedMessages()).toBe(true);
    const stopId = await request({ action: "stop", sessionId });
    expect((await controlEnded(stopId)).data).toMatchObject({ action: "stop", status: "applied" });
    expect((await first).status).toBe("aborted");
    expect(harness.hasQueuedMessages()).toBe(false);

    expect((await harness.prompt("next")).status).toBe("done");
    const lastRequest = JSON.stringify(model.doStreamCalls.at(-1)!.prompt);
    expect(lastRequest).toContain("next");
    expect(lastRequest).not.toContain("STALE-STEER-7d1e");
    expect(lastRequest).not.toContain("STALE-FOLLOW-4b9a");
  }, 120_000);
});

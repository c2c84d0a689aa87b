/**
 * A run stopped for approval whose call is approved by a process that does not continue it (a
 * person's `arbor approve`, a control request) is continued by a worker with no request: the
 * prompting harness records the decision and closes; a worker (`createWorker`, durability
 * `continue`) on the same SQLite file continues the run (its `resume` run) to `done`, and the
 * approved call runs once. The worker first leaves the decided run to its decider for a moment.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { afterEach, describe, expect, it } from "vitest";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createWorker } from "../../src/harness/worker.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { waitForSessionEvent } from "../http/replicas.ts";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("a decided approval whose run waits", () => {
  it("is continued to done by a worker, with no request", async () => {
    const log = createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-worker-approvals-")), "arbor.db") });
    closers.push(() => log.close());
    let runs = 0;
    const guarded = defineTool({ name: "guarded", description: "Needs approval", parameters: z.object({}), execute: async () => ((runs += 1), { content: [{ type: "text", text: "guarded ran" }] }) });
    const options = { eventLog: log, requireApproval: ["guarded"], tools: [guarded] };
    const harness = await createHarness({ ...options, models: { main: scriptedModel([{ toolCalls: [{ id: "c1", name: "guarded", arguments: {} }] }]) } });
    const sessionId = harness.id;
    expect((await harness.prompt("guarded please")).status).toBe("suspended");
    await harness.approve("c1");
    await harness.close();

    const worker = createWorker({ ...options, durability: "continue", models: { main: scriptedModel([{ text: "Approved and done." }]) }, sweepIntervalMs: 100 });
    closers.push(() => worker.close());
    const ended = await waitForSessionEvent(log, sessionId, (event) => event.type === "run.ended" && (event.data as { status: string }).status !== "suspended");
    expect(ended.data).toMatchObject({ status: "done" });
    const events = await log.readStream(`session-${sessionId}`);
    expect(events.filter((event) => event.type === "run.started").map((event) => (event.data as { kind: string }).kind)).toEqual(["prompt", "resume"]);
    expect(runs).toBe(1);
  }, 60_000);
});

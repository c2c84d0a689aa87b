/**
 * A fleet shares the work: two real worker processes (`createWorker`) on one PostgreSQL schema,
 * and on one SQLite file, run background prompts (`harness.start`) and a scheduled prompt
 * (`startAt`) that this process only queued, with no request. Each task is claimed by one worker
 * (`task.claimed`) and runs exactly once; the scheduled one does not run before its time. A worker
 * killed with SIGKILL mid-run loses nothing: the other takes its task over once the claim is dead.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { readTask, taskStreamId, type TaskState } from "../../src/store/task-queue.ts";
import { hangResponse, startOpenAIServer, textResponse } from "../../src/testing/openai-server.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { spawnTsx, type LineChild } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

const newSchema = useTestSchemas("fleet");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Backend {
  name: string;
  open(): { log: EventLog; config: { db: string; schema?: string } };
}

const backends: Backend[] = [
  {
    name: "PostgreSQL",
    open() {
      const schema = newSchema();
      return { log: createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 }), config: { db: PG_URL, schema } };
    },
  },
  {
    name: "SQLite",
    open() {
      const path = join(tempDir("arbor-fleet-"), "fleet.db");
      return { log: createSqliteEventLog({ path }), config: { db: path } };
    },
  },
];

/** The prompt's own words, so a reply names the prompt it answers. */
function lastUserText(body: unknown): string {
  const messages = ((body as { messages?: { role: string; content: unknown }[] })?.messages ?? []).filter((message) => message.role === "user");
  return JSON.stringify(messages.at(-1)?.content ?? "");
}

async function startWorkers(count: number, config: object, baseURL: string): Promise<LineChild[]> {
  const workers = Array.from({ length: count }, () => spawnTsx("test/fleet/fixtures/worker-process.ts", [JSON.stringify({ ...config, baseURL })]));
  for (const worker of workers) {
    closers.push(async () => {
      worker.process.kill("SIGKILL");
      await worker.exited;
    });
  }
  for (const worker of workers) expect(await worker.nextLine()).toBe("ready");
  return workers;
}

/** Polls the tasks until each has ended (the log is the only channel to the workers). */
async function allEnded(log: EventLog, taskIds: string[], timeoutMs = 90_000): Promise<TaskState[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(taskIds.map((id) => readTask(log, id)));
    if (states.every((state) => state?.ended)) return states as TaskState[];
    if (Date.now() > deadline) throw new Error(`tasks not ended: ${states.filter((state) => !state?.ended).map((state) => state?.taskId).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function runsOf(events: StoredEvent[]): StoredEvent[] {
  return events.filter((event) => event.type === "run.started");
}

describe.each(backends)("a fleet of worker processes on $name", (backend) => {
  it("runs background and scheduled prompts it was never asked for directly: each task once, by one claim, the scheduled one not before its time", async () => {
    const server = await startOpenAIServer({ respond: (request) => textResponse(`answer to ${lastUserText(request.body)}`) });
    closers.push(() => server.close());
    const { log, config } = backend.open();
    closers.push(() => log.close());
    const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } });
    closers.push(() => harness.close());

    const sessions: string[] = [];
    for (let index = 0; index < 8; index++) sessions.push((await harness.createSession({ cwd: "/tmp" })).id);
    const started = await Promise.all(sessions.map((id, index) => harness.start(id, `background prompt ${index}`)));
    const startAt = new Date(Date.now() + 4_000);
    const scheduled = await harness.start(sessions[0], "scheduled prompt", { startAt });
    expect(scheduled.startAt).toBe(startAt.toISOString());

    await startWorkers(2, config, server.url);
    const states = await allEnded(log, [...started.map((task) => task.taskId), scheduled.taskId]);

    for (const state of states) {
      expect(state.ended?.status, state.taskId).toBe("done");
      expect(state.claims.map((claim) => claim.attempt)).toEqual([1]);
    }
    for (const [index, id] of sessions.entries()) {
      const events = await log.readStream(sessionStreamId(id));
      const users = events.filter((event) => event.type === "entry.appended" && (event.data as { entry: { message?: { role: string } } }).entry.message?.role === "user");
      const texts = users.map((event) => JSON.stringify((event.data as { entry: { message: { content: unknown } } }).entry.message.content));
      const expected = index === 0 ? 2 : 1;
      expect(runsOf(events)).toHaveLength(expected);
      expect(texts.filter((text) => text.includes(`background prompt ${index}`))).toHaveLength(1);
      if (index === 0) {
        expect(texts.filter((text) => text.includes("scheduled prompt"))).toHaveLength(1);
        const scheduledRun = runsOf(events).find((event) => event.data && (event.data as { runId: string }).runId === states.at(-1)!.ended!.runId)!;
        expect(Date.parse(scheduledRun.time)).toBeGreaterThanOrEqual(startAt.getTime());
      }
    }
    // The answers are the model's replies to the right prompts.
    const context = (await harness.repository!.open(sessions[3])).view.buildContext().messages;
    expect(JSON.stringify(context.at(-1))).toContain("background prompt 3");
  }, 120_000);

  it("a worker killed with SIGKILL mid-run: the other takes its task over when the claim is dead, and the run is not run twice", async () => {
    const server = await startOpenAIServer({ respond: (request) => (lastUserText(request.body).includes("hold") ? hangResponse() : textResponse("ok")) });
    closers.push(() => server.close());
    const { log, config } = backend.open();
    closers.push(() => log.close());
    const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } });
    closers.push(() => harness.close());
    const session = await harness.createSession({ cwd: "/tmp" });
    const task = await harness.start(session.id, "hold this one");

    const workers = await startWorkers(2, config, server.url);
    // The run is under way once the model was asked; then its claimer is killed.
    const deadline = Date.now() + 60_000;
    while (server.requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const claimed = await readTask(log, task.taskId);
    const owner = claimed!.claim!.owner as { pid: number };
    const victim = workers.find((worker) => worker.process.pid === owner.pid)!;
    expect(victim).toBeDefined();
    victim.process.kill("SIGKILL");
    await victim.exited;

    const [state] = await allEnded(log, [task.taskId]);
    expect(state.claims.map((claim) => claim.attempt)).toEqual([1, 2]);
    expect((state.claims[1].owner as { pid: number }).pid).not.toBe(owner.pid);
    // Durability "interrupt" (the default): the taken-over run is closed, never started again.
    expect(state.ended?.status).toBe("interrupted");
    const events = await log.readStream(sessionStreamId(session.id));
    expect(runsOf(events)).toHaveLength(1);
    expect(events.filter((event) => event.type === "run.ended")).toHaveLength(1);
    expect((await log.readStream(taskStreamId(task.taskId))).map((event) => event.type)).toEqual(["task.queued", "task.claimed", "task.claimed", "task.ended"]);
  }, 120_000);
});

/**
 * Chaos: three worker processes (`createWorker`, durability `continue`) share one log, on one
 * PostgreSQL schema and on one SQLite file. This process queues 60 background prompts (one per
 * session); the loopback model answers each with five tool turns, each turn one call of a
 * `replay: "safe"` tool (its effect applied once per idempotency key, every execution counted in
 * a table) and one of a replay-unsafe tool (every execution recorded), then the text "done".
 * Every 3 s for 60 s a random worker is killed with SIGKILL and a new one started in its place.
 *
 * Expected: every task and every run ends `done` (one `run.started`, one `run.ended` per
 * session; takeovers are `run.resumed`); each safe call's effect exists once per key; each
 * unsafe call ran at most once, and exactly once unless its result is `interrupted`; no event,
 * entry or prompt is lost or duplicated; each call starts once, ends once and has one result.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { readTask, type TaskState } from "../../src/store/task-queue.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/openai-server.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { spawnTsx, type LineChild } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { openChaosEffects, type ChaosEffects } from "./fixtures/chaos-effects.ts";

const SESSIONS = 60;
const TURNS = 5;
const PROCESSES = 3;
const KILL_EVERY_MS = 3_000;
const CHAOS_MS = 60_000;
/** Pacing, so that the work spans the minute of chaos: the model's wait between SSE frames, and each tool call's duration. */
const FRAME_DELAY_MS = 60;
const TOOL_MS = 400;
const CONCURRENCY = 8;

const newSchema = useTestSchemas("chaos");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch((error: unknown) => console.error(error));
});

interface Setup {
  log: EventLog;
  effects: ChaosEffects;
  config: { db: string; schema?: string; effects?: string };
}

const backends: { name: string; open(): Promise<Setup> }[] = [
  {
    name: "PostgreSQL",
    async open() {
      const schema = newSchema();
      const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
      await log.headPosition(); // creates the schema
      return { log, effects: await openChaosEffects({ pg: PG_URL, schema }, true), config: { db: PG_URL, schema } };
    },
  },
  {
    name: "SQLite",
    async open() {
      const dir = tempDir("arbor-chaos-");
      const effects = join(dir, "effects.db");
      const log = createSqliteEventLog({ path: join(dir, "arbor.db") });
      return { log, effects: await openChaosEffects({ sqlite: effects }, true), config: { db: join(dir, "arbor.db"), effects } };
    },
  },
];

/** The model: five turns of one safe and one unsafe call (fresh call ids, as a real model gives), then "done". */
function respond(body: unknown) {
  const messages = ((body as { messages?: { role: string }[] })?.messages ?? []) as { role: string }[];
  const turn = messages.filter((message) => message.role === "tool").length / 2;
  if (turn >= TURNS) return textResponse("done", { delayMs: FRAME_DELAY_MS });
  const id = randomUUID().slice(0, 8);
  return toolCallResponse([
    { id: `call_s${turn}_${id}`, name: "safe_effect", arguments: { turn } },
    { id: `call_u${turn}_${id}`, name: "unsafe_effect", arguments: { turn } },
  ], { delayMs: FRAME_DELAY_MS });
}

/**
 * The fleet: `PROCESSES` workers. `killRandom()` kills one that is running (it printed "ready")
 * and starts its replacement without waiting for it (a restart under load takes seconds, and the
 * next kill is due in 3 s); it returns false when no process is running yet.
 */
function fleet(config: object, baseURL: string) {
  const ready: LineChild[] = [];
  const all: LineChild[] = [];
  const restarts: Promise<unknown>[] = [];
  const start = async () => {
    const child = spawnTsx("test/fleet/fixtures/chaos-worker.ts", [JSON.stringify({ ...config, baseURL, concurrency: CONCURRENCY, toolMs: TOOL_MS })]);
    all.push(child);
    expect(await child.nextLine()).toBe("ready");
    ready.push(child);
    return child;
  };
  closers.push(async () => {
    for (const child of all) child.process.kill("SIGKILL");
    await Promise.all(all.map((child) => child.exited));
    await Promise.allSettled(restarts);
  });
  return {
    start,
    async killRandom(): Promise<boolean> {
      if (ready.length === 0) return false;
      const victim = ready.splice(Math.floor(Math.random() * ready.length), 1)[0];
      victim.process.kill("SIGKILL");
      expect((await victim.exited).signal).toBe("SIGKILL");
      restarts.push(start());
      return true;
    },
    /** Resolves once every restart printed "ready" (rejects if one failed). */
    restarted: () => Promise.all(restarts),
  };
}

async function states(log: EventLog, taskIds: string[]): Promise<TaskState[]> {
  return (await Promise.all(taskIds.map((id) => readTask(log, id)))) as TaskState[];
}

/** Every call of the context has exactly one result, after it. Returns the calls by tool name. */
function checkPairing(messages: AgentMessage[]): Map<string, string> {
  const open = new Map<string, string>();
  const calls = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "assistant") {
      const assistant = message as AssistantMessage;
      if (assistant.stopReason === "aborted" || assistant.stopReason === "error") continue;
      for (const block of assistant.content) {
        if (block.type !== "toolCall") continue;
        expect(calls.has(block.id), `tool call ${block.id} twice`).toBe(false);
        calls.set(block.id, block.name);
        open.set(block.id, block.name);
      }
    } else if (message.role === "toolResult") {
      const result = message as ToolResultMessage;
      expect(open.has(result.toolCallId), `result ${result.toolCallId} without its call`).toBe(true);
      open.delete(result.toolCallId);
    }
  }
  expect([...open.keys()], "calls without a result").toEqual([]);
  return calls;
}

function countBy(events: StoredEvent[], type: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of events) {
    if (event.type !== type) continue;
    const id = (event.data as { toolCallId: string }).toolCallId;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe.each(backends)("chaos: 3 worker processes on $name, kill -9 every 3 s", (backend) => {
  it(`${SESSIONS} sessions of ${TURNS} tool turns all end done; safe effects once per key, unsafe calls at most once; nothing lost, duplicated or unpaired`, async () => {
    const server = await startOpenAIServer({ respond: (request) => respond(request.body) });
    closers.push(() => server.close());
    const { log, effects, config } = await backend.open();
    closers.push(() => log.close());
    closers.push(() => effects.close());
    const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } });
    closers.push(() => harness.close());

    const sessions: string[] = [];
    for (let index = 0; index < SESSIONS; index++) sessions.push((await harness.createSession({ cwd: "/tmp" })).id);
    const tasks = await Promise.all(sessions.map((id, index) => harness.start(id, `session ${index}: go`)));
    const taskIds = tasks.map((task) => task.taskId);

    const began = Date.now();
    const workers = fleet(config, server.url);
    await Promise.all(Array.from({ length: PROCESSES }, () => workers.start()));

    // The chaos: a kill every 3 s for 60 s (or until every task ended, if sooner).
    const chaosEnd = Date.now() + CHAOS_MS;
    let kills = 0;
    let nextKill = Date.now() + KILL_EVERY_MS;
    while (nextKill <= chaosEnd) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, nextKill - Date.now())));
      nextKill += KILL_EVERY_MS;
      if ((await states(log, taskIds)).every((state) => state.ended)) break;
      if (await workers.killRandom()) kills += 1;
    }
    expect(kills).toBeGreaterThan(0);
    await workers.restarted();

    // Then the fleet finishes the work.
    const deadline = Date.now() + 200_000;
    let ended = await states(log, taskIds);
    while (!ended.every((state) => state.ended)) {
      if (Date.now() > deadline) throw new Error(`tasks not ended: ${ended.filter((state) => !state.ended).length} of ${SESSIONS}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      ended = await states(log, taskIds);
    }

    const all = await log.readAll();
    // 0 lost or duplicated events: contiguous positions, unique ids.
    expect(all.map((event) => event.globalPosition)).toEqual(all.map((_, index) => index + 1));
    expect(new Set(all.map((event) => event.eventId)).size).toBe(all.length);

    const safeRows = await effects.safeRows();
    const unsafeRows = await effects.unsafeRows();
    const safeCalls = new Set<string>();
    const unsafeCalls = new Set<string>();
    let takeovers = 0;
    let interruptedUnsafe = 0;
    for (const [index, id] of sessions.entries()) {
      const state = ended[index];
      const events = all.filter((event) => event.streamId === sessionStreamId(id));
      expect(events.map((event) => event.version), id).toEqual(events.map((_, position) => position + 1));
      // Every run reaches done: one run, started once, ended once, done (takeovers are run.resumed).
      const started = events.filter((event) => event.type === "run.started");
      const runEnds = events.filter((event) => event.type === "run.ended");
      expect(started, id).toHaveLength(1);
      expect(runEnds.map((event) => (event.data as { status: string }).status), id).toEqual(["done"]);
      expect(state.ended, `${id}: ${JSON.stringify(state.ended)}`).toMatchObject({ status: "done", runId: (started[0].data as { runId: string }).runId });
      const resumed = events.filter((event) => event.type === "run.resumed");
      takeovers += resumed.length;
      const interrupted = new Set(resumed.flatMap((event) => (event.data as { interruptedToolCallIds?: string[] }).interruptedToolCallIds ?? []));
      // 0 duplicated entries; the prompt once.
      const entries = events.filter((event) => event.type === "entry.appended").map((event) => event.data as { entry: { id: string; message?: { role: string; content: unknown } } });
      expect(new Set(entries.map((entry) => entry.entry.id)).size, id).toBe(entries.length);
      expect(entries.filter((entry) => entry.entry.message?.role === "user").map((entry) => JSON.stringify(entry.entry.message!.content)), id).toEqual([
        expect.stringContaining(`session ${index}: go`),
      ]);
      // Each call starts once and ends once.
      const toolStarted = countBy(events, "tool.started");
      const toolEnded = countBy(events, "tool.ended");
      expect([...toolStarted.values()].every((count) => count === 1), id).toBe(true);
      expect([...toolEnded.values()].every((count) => count === 1), id).toBe(true);
      // The context: paired, five turns of two calls, then "done".
      const messages = (await harness.repository!.open(id)).view.buildContext().messages;
      const calls = checkPairing(messages);
      expect(calls.size, id).toBe(TURNS * 2);
      const last = messages.at(-1) as AssistantMessage;
      expect(last.content, id).toEqual([expect.objectContaining({ type: "text", text: "done" })]);
      for (const [callId, name] of calls) {
        expect(toolEnded.get(callId), callId).toBe(1);
        if (name === "safe_effect") {
          safeCalls.add(callId);
          expect(interrupted.has(callId), `safe call ${callId} interrupted`).toBe(false);
          expect(safeRows.get(callId), `the effect of ${callId}`).toMatchObject({ applied: 1 });
        } else {
          unsafeCalls.add(callId);
          const runs = unsafeRows.get(callId) ?? 0;
          expect(runs, `executions of ${callId}`).toBeLessThanOrEqual(1);
          if (interrupted.has(callId)) interruptedUnsafe += 1;
          else expect(runs, `executions of ${callId}, not interrupted`).toBe(1);
        }
      }
    }
    // No effect of a call the log does not have.
    expect([...safeRows.keys()].filter((key) => !safeCalls.has(key))).toEqual([]);
    expect([...unsafeRows.keys()].filter((key) => !unsafeCalls.has(key))).toEqual([]);
    // The chaos did hit runs: some were taken over.
    expect(takeovers).toBeGreaterThan(0);
    console.log(JSON.stringify({ backend: backend.name, seconds: Math.round((Date.now() - began) / 1000), kills, takeovers, interruptedUnsafe, events: all.length }));
  }, 420_000);
});

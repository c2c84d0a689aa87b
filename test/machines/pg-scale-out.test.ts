/**
 * Scale-out on PostgreSQL: four worker processes share one database and serve 40
 * sessions, each running 10 scripted tool turns against the loopback OpenAI server
 * (real @ai-sdk/openai HTTP). One worker is SIGKILLed mid-run (when the server has
 * seen a set number of its sessions' requests); the others carry on, and a survivor
 * resumes the dead worker's sessions once their locks are gone. Counted: 0 lost
 * events, 0 duplicated entries, every context paired, every session's stream
 * versions contiguous.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/core/messages.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { type LineChild, spawnTsx } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { startStepServer } from "./pg-scripted-server.ts";

const newSchema = useTestSchemas("scale");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const WORKERS = 4;
const SESSIONS = 40;
const TURNS = 10;
/** The victim is killed when the server has received this many requests of its sessions (of 10 × 11). */
const KILL_AFTER_REQUESTS = 40;

interface Done {
  done: string;
  status: string;
  version: number;
  resumed?: boolean;
}

/** Collects a worker's JSON lines; `until(n)` resolves once n sessions reported done. */
function reports(worker: LineChild) {
  const done: Done[] = [];
  const failures: unknown[] = [];
  let waiter: { count: number; resolve: () => void } | undefined;
  void (async () => {
    for (;;) {
      const line = await worker.nextLine().catch(() => undefined);
      if (line === undefined) return;
      const value = JSON.parse(line) as Done | { failed: string } | string;
      if (typeof value === "object" && "done" in value) done.push(value);
      else if (typeof value === "object") failures.push(value);
      if (waiter && done.length >= waiter.count) waiter.resolve();
    }
  })();
  return {
    done,
    failures,
    until: (count: number) => (done.length >= count ? Promise.resolve() : new Promise<void>((resolve) => (waiter = { count, resolve }))),
  };
}

function checkPairing(messages: AgentMessage[]): number {
  const open = new Set<string>();
  const seen = new Set<string>();
  let results = 0;
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type !== "toolCall") continue;
        expect(seen.has(block.id), `tool call ${block.id} twice`).toBe(false);
        seen.add(block.id);
        open.add(block.id);
      }
    } else if (message.role === "toolResult") {
      expect(open.has(message.toolCallId), `result ${message.toolCallId} without its call`).toBe(true);
      open.delete(message.toolCallId);
      results += 1;
    }
  }
  expect([...open], "calls without a result").toEqual([]);
  return results;
}

describe("PostgreSQL scale-out", () => {
  it("four processes serve 40 sessions; one is SIGKILLed mid-run and a survivor resumes its sessions with nothing lost or duplicated", async () => {
    const schema = newSchema();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    closers.push(() => log.close());
    const repository = createSessionRepository({ log });
    const ids: string[] = [];
    for (let index = 0; index < SESSIONS; index++) ids.push((await repository.create({ cwd: "/tmp" })).id);
    const assigned = Array.from({ length: WORKERS }, (_, worker) => ids.filter((_, index) => index % WORKERS === worker));
    const victimSessions = new Set(assigned[0]);

    // Every event, as a live subscriber in this process receives it while the workers write.
    const live: StoredEvent[] = [];
    const liveSubscription = log.subscribe().subscribe((event) => live.push(event));
    closers.push(async () => liveSubscription.unsubscribe());

    const killTarget: { child?: LineChild } = {};
    let victimRequests = 0;
    const server = await startStepServer((_request, session) => {
      if (session && victimSessions.has(session) && ++victimRequests === KILL_AFTER_REQUESTS) killTarget.child?.process.kill("SIGKILL");
    });
    closers.push(() => server.close());

    const workers = assigned.map(() => spawnTsx("test/machines/fixtures/pg-worker.ts", [PG_URL, schema, server.url]));
    const victim = (killTarget.child = workers[0]);
    for (const worker of workers) {
      closers.push(async () => {
        worker.process.kill("SIGKILL");
        await worker.exited;
      });
    }
    for (const worker of workers) expect(await worker.nextLine()).toBe('"ready"');
    const outputs = workers.map(reports);
    workers.forEach((worker, index) => worker.process.stdin.write(`${JSON.stringify({ cmd: "run", sessions: assigned[index] })}\n`));

    expect((await victim.exited).signal).toBe("SIGKILL");
    const survivor = workers[1];
    survivor.process.stdin.write(`${JSON.stringify({ cmd: "resume", sessions: assigned[0] })}\n`);
    for (let index = 1; index < WORKERS; index++) await outputs[index].until(assigned[index].length + (index === 1 ? assigned[0].length : 0));
    for (const output of outputs.slice(1)) expect(output.failures).toEqual([]);
    const finished = outputs.slice(1).flatMap((output) => output.done);
    expect(new Set(finished.map((done) => done.done))).toEqual(new Set(ids));
    expect(outputs[0].done.length).toBeLessThan(assigned[0].length); // the victim died mid-run

    // 0 lost events: what the live subscriber received is the whole log, positions 1..N.
    const all = await log.readAll();
    await expect.poll(() => live.length, { timeout: 20_000 }).toBe(all.length);
    expect(live).toEqual(all);
    expect(all.map((event) => event.globalPosition)).toEqual(all.map((_, index) => index + 1));
    expect(new Set(all.map((event) => event.eventId)).size).toBe(all.length);

    let interruptedRuns = 0;
    for (const id of ids) {
      const events = all.filter((event) => event.streamId === `session-${id}`);
      // Contiguous stream versions.
      expect(events.map((event) => event.version)).toEqual(events.map((_, index) => index + 1));
      // 0 duplicated entries.
      const entryIds = events.filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { id: string } }).entry.id);
      expect(new Set(entryIds).size).toBe(entryIds.length);
      interruptedRuns += events.filter(
        (event) => event.type === "run.interrupted" || (event.type === "run.ended" && (event.data as { status?: string }).status === "interrupted"),
      ).length;
      // Every context paired, ten tool turns, then the final answer.
      const session = await repository.open(id);
      const messages = session.view.buildContext().messages;
      expect(checkPairing(messages)).toBe(TURNS);
      const last = messages[messages.length - 1];
      expect(last.role === "assistant" && last.content.some((block) => block.type === "text" && block.text === "done")).toBe(true);
      const reported = finished.find((done) => done.done === id)!;
      expect(reported.version).toBe(events.length);
    }
    // The victim's unfinished runs were closed by recovery before being resumed.
    expect(interruptedRuns).toBeGreaterThan(0);
  }, 120_000);
});

/**
 * "The owner dies here": an owner process (real log, the real @ai-sdk/openai client against the
 * loopback server) is driven into one state of the agent machine and killed with SIGKILL there;
 * another process that never saw the run continues (`durability: "continue"`, `harness.resume`,
 * then what still waits: approve and continue, or the prompt the owner never committed). Used by
 * the agent machine's path tests in `model-based.test.ts`.
 */
import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type ScriptedResponse } from "../../src/testing/openai-server.ts";
import { spawnTsx } from "../store/child-process.ts";
import { PG_URL } from "../store/pg-test-db.ts";
import { checkCallsOnce, checkPairing } from "./run-checks.ts";

const CHILD = "test/machines/fixtures/owner-dies-child.ts";

/** Where the logs live. */
export type Backend = "sqlite" | "pg";

/** What the continuing process reports. */
export interface Continued {
  /** `harness.resume`'s outcome status, or the code it was refused with. */
  resume: string;
  /** How many waiting calls it approved before `continue()`. */
  approved?: number;
  /** The status of its `continue()` or of the prompt sent again. */
  final?: string;
}

/**
 * What each state of the agent machine looks like when the owner dies there: the model's
 * answers across both processes, how the parent knows the owner is there, and what the
 * continuing process reports.
 */
export const OWNER_DIES: Record<string, { script: () => ScriptedResponse[]; killAt: "line" | number; continued: Continued }> = {
  idle: { script: () => [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), textResponse("all done")], killAt: "line", continued: { resume: "NOTHING_TO_RESUME" } },
  // Killed inside beforeAgentStart: the prompt was never committed, so the continuing process sends it again.
  preparing: {
    script: () => [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), textResponse("all done")],
    killAt: "line",
    continued: { resume: "NOTHING_TO_RESUME", final: "done" },
  },
  running: { script: () => [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), textResponse("all done")], killAt: "line", continued: { resume: "done" } },
  "awaiting-approval": {
    script: () => [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }, { id: "call_w1", name: "write", arguments: {} }]), textResponse("all done")],
    killAt: "line",
    continued: { resume: "suspended", approved: 1, final: "done" },
  },
  // Killed while the summary request is in flight (the third request hangs).
  compacting: { script: () => [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), textResponse("all done"), hangResponse()], killAt: 3, continued: { resume: "NOTHING_TO_RESUME" } },
  navigating: { script: () => [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), textResponse("all done"), hangResponse()], killAt: 3, continued: { resume: "NOTHING_TO_RESUME" } },
};

async function openLog(backend: Backend, schema: () => string): Promise<{ log: EventLog; where: string }> {
  if (backend === "pg") {
    const name = schema();
    return { log: createPostgresEventLog({ connectionString: PG_URL, schema: name, poolSize: 2 }), where: name };
  }
  const path = join(mkdtempSync(join(tmpdir(), "arbor-dies-")), "arbor.db");
  return { log: createSqliteEventLog({ path }), where: path };
}

/**
 * Kills the owner in `state`, continues in another process, and checks the log: nothing left
 * open, the last run `done`, every call started and ended once and paired with one result, each
 * effect counted once per idempotency key, the gated call written once after its approval.
 */
export async function ownerDiesIn(backend: Backend, state: string, schema: () => string, closers: (() => Promise<unknown>)[]): Promise<StoredEvent[]> {
  const plan = OWNER_DIES[state];
  const server = await startOpenAIServer();
  closers.push(() => server.close());
  server.script(...plan.script());
  const { log, where } = await openLog(backend, schema);
  closers.push(() => log.close());
  const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
  const effectsPath = join(mkdtempSync(join(tmpdir(), "arbor-dies-effects-")), "effects.db");
  const args = (role: string) => [backend, where, session.id, server.url, effectsPath, role, state];

  const owner = spawnTsx(CHILD, args("owner"));
  closers.push(async () => {
    owner.process.kill("SIGKILL");
    await owner.exited;
  });
  if (plan.killAt === "line") expect(await owner.nextLine(), owner.stderr()).toBe("KILL_ME");
  else await server.waitForRequests(plan.killAt);
  owner.process.kill("SIGKILL");
  expect((await owner.exited).signal).toBe("SIGKILL");

  const next = spawnTsx(CHILD, args("continue"));
  const line = await next.nextLine();
  await next.exited;
  expect(JSON.parse(line) as Continued, next.stderr()).toEqual(plan.continued);

  const events = await log.readStream(sessionStreamId(session.id));
  const reopened = await createSessionRepository({ log }).open(session.id);
  // Nothing is left open: no run, no summary intent, no call waiting.
  expect(reopened.view.activity.openRun).toBeUndefined();
  expect(reopened.view.activity.summaries).toEqual([]);
  const starts = events.filter((event) => event.type === "run.started").length;
  const ends = events.filter((event) => event.type === "run.ended");
  expect(ends).toHaveLength(starts);
  expect((ends.at(-1)!.data as { status: string }).status).toBe("done");
  checkCallsOnce(events);
  checkPairing(reopened.view.buildContext().messages);
  // No entry is written twice.
  const entryIds = events.filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { id: string } }).entry.id);
  expect(new Set(entryIds).size).toBe(entryIds.length);
  const effects = new Database(effectsPath, { readonly: true });
  expect(effects.prepare("SELECT key, COUNT(*) AS n FROM effects GROUP BY key").all()).toEqual([{ key: "call_c1", n: 1 }]);
  expect(effects.prepare("SELECT key FROM writes").all()).toEqual(state === "awaiting-approval" ? [{ key: "call_w1" }] : []);
  effects.close();
  return events;
}

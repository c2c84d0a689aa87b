/**
 * Durable execution with real processes: an owner process runs a prompt (real log, the real
 * @ai-sdk/openai client against the loopback server) and is killed with SIGKILL at a point of
 * the run; another process that never saw the run continues it with `harness.resume()`, on
 * SQLite and on PostgreSQL. Expected every time: the continued run ends `done` under the same
 * run id, one `run.resumed` names the dead owner, every call is paired, nothing is duplicated,
 * each `replay: "safe"` call's effect counts once per idempotency key, and a replay-unsafe call
 * in flight ran at most once and has the `interrupted` result.
 */
import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type ScriptedResponse } from "../../src/testing/openai-server.ts";
import { spawnTsx } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { checkCallsOnce, checkPairing } from "./run-checks.ts";

const CHILD = "test/machines/fixtures/continuation-child.ts";
const newSchema = useTestSchemas("cont");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Backend = "sqlite" | "pg";
type KillPoint = "stream" | "safe" | "unsafe" | "request";

/** What the model answers, in order, across both processes. */
function script(point: KillPoint): ScriptedResponse[] {
  const done = textResponse("all done");
  switch (point) {
    case "stream":
      return [hangResponse("a partial answer that never"), toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), done];
    case "safe":
      return [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), done];
    case "unsafe":
      return [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }, { id: "call_u1", name: "launch", arguments: {} }]), done];
    case "request":
      return [toolCallResponse([{ id: "call_c1", name: "count", arguments: {} }]), hangResponse(), done];
  }
}

async function openLog(backend: Backend): Promise<{ log: EventLog; where: string }> {
  if (backend === "pg") {
    const schema = newSchema();
    return { log: createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 }), where: schema };
  }
  const path = join(mkdtempSync(join(tmpdir(), "arbor-cont-")), "arbor.db");
  return { log: createSqliteEventLog({ path }), where: path };
}

async function killAndResume(backend: Backend, point: KillPoint) {
  const server = await startOpenAIServer();
  closers.push(() => server.close());
  server.script(...script(point));
  const { log, where } = await openLog(backend);
  closers.push(() => log.close());
  const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
  const effectsPath = join(mkdtempSync(join(tmpdir(), "arbor-effects-")), "effects.db");
  const args = (role: string) => [backend, where, session.id, server.url, effectsPath, role, point === "request" ? "none" : point];

  const owner = spawnTsx(CHILD, args("owner"));
  closers.push(async () => {
    owner.process.kill("SIGKILL");
    await owner.exited;
  });
  if (point === "request") await server.waitForRequests(2);
  else expect(await owner.nextLine()).toBe("KILL_ME");
  owner.process.kill("SIGKILL");
  expect((await owner.exited).signal).toBe("SIGKILL");

  const resumer = spawnTsx(CHILD, args("resume"));
  const line = await resumer.nextLine();
  await resumer.exited;
  const outcome = JSON.parse(line) as { status: string; error?: string };
  expect(outcome, resumer.stderr()).toEqual({ status: "done" });

  const events = await log.readStream(sessionStreamId(session.id));
  const effects = new Database(effectsPath, { readonly: true });
  const rows = {
    effects: effects.prepare("SELECT key, COUNT(*) AS n FROM effects GROUP BY key").all() as { key: string; n: number }[],
    attempts: effects.prepare("SELECT key, COUNT(*) AS n FROM attempts GROUP BY key").all() as { key: string; n: number }[],
    unsafe: effects.prepare("SELECT key FROM unsafe_runs").all() as { key: string }[],
  };
  effects.close();
  const reopened = await createSessionRepository({ log }).open(session.id);
  return { events, rows, messages: reopened.view.buildContext().messages, ownerPid: owner.process.pid };
}

function checkRun(events: StoredEvent[], ownerPid: number | undefined) {
  const started = events.filter((event) => isEventOfType(event, "run.started"));
  const resumed = events.filter((event) => isEventOfType(event, "run.resumed"));
  const ended = events.filter((event) => isEventOfType(event, "run.ended"));
  expect(started).toHaveLength(1);
  expect(resumed).toHaveLength(1);
  expect(ended).toHaveLength(1);
  const runId = (started[0].data as { runId: string }).runId;
  expect(ended[0].data).toMatchObject({ runId, status: "done" });
  expect(resumed[0].data).toMatchObject({ runId, previousOwner: { pid: ownerPid } });
  expect((resumed[0].metadata.owner as { pid: number }).pid).not.toBe(ownerPid);
  // Each call starts once and ends once.
  checkCallsOnce(events);
  return resumed[0].data as { replayToolCallIds?: string[]; interruptedToolCallIds?: string[]; closedMessageEntryId?: string };
}

describe.each<Backend>(["sqlite", "pg"])("a run continued by another process after SIGKILL (%s)", { timeout: 180_000 }, (backend) => {
  it("killed mid-stream: the partial message is closed and the model call is issued again", async () => {
    const { events, rows, messages, ownerPid } = await killAndResume(backend, "stream");
    const resumed = checkRun(events, ownerPid);
    expect(resumed.closedMessageEntryId).toBeDefined();
    const aborted = messages.filter((message) => message.role === "assistant" && (message as AssistantMessage).stopReason === "aborted");
    expect(aborted).toHaveLength(1);
    checkPairing(messages);
    expect(rows.effects).toEqual([{ key: "call_c1", n: 1 }]);
  });

  it("killed inside a replay-safe tool: it runs again with the same idempotency key, its effect counts once", async () => {
    const { events, rows, messages, ownerPid } = await killAndResume(backend, "safe");
    const resumed = checkRun(events, ownerPid);
    expect(resumed.replayToolCallIds).toEqual(["call_c1"]);
    checkPairing(messages);
    expect(rows.effects).toEqual([{ key: "call_c1", n: 1 }]);
    expect(rows.attempts).toEqual([{ key: "call_c1", n: 2 }]);
    const result = messages.find((message) => message.role === "toolResult") as ToolResultMessage;
    expect(result).toMatchObject({ toolCallId: "call_c1", isError: false, content: [{ type: "text", text: "counted call_c1" }] });
  });

  it("killed inside a replay-unsafe tool: it gets the interrupted result, never runs again, and the model goes on", async () => {
    const { events, rows, messages, ownerPid } = await killAndResume(backend, "unsafe");
    const resumed = checkRun(events, ownerPid);
    expect(resumed.interruptedToolCallIds).toEqual(["call_u1"]);
    checkPairing(messages);
    expect(rows.unsafe).toEqual([{ key: "call_u1" }]);
    expect(rows.effects).toEqual([{ key: "call_c1", n: 1 }]);
    const interrupted = messages.find((message) => message.role === "toolResult" && (message as ToolResultMessage).toolCallId === "call_u1") as ToolResultMessage;
    expect(interrupted).toMatchObject({ isError: true, details: { arbor: "interrupted" } });
  });

  it("killed while the second model request is in flight: completed tool results are kept, the call is made again", async () => {
    const { events, rows, messages, ownerPid } = await killAndResume(backend, "request");
    const resumed = checkRun(events, ownerPid);
    expect(resumed.replayToolCallIds).toBeUndefined();
    expect(resumed.interruptedToolCallIds).toBeUndefined();
    checkPairing(messages);
    expect(rows.attempts).toEqual([{ key: "call_c1", n: 1 }]);
  });
});

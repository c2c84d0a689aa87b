/**
 * Typed agents across real processes (issue 13): real child processes over one real SQLite file
 * and the real @ai-sdk/openai client against a loopback OpenAI server.
 * - A run that stops for tool approval ends the invocation `suspended`, naming the waiting call
 *   (no `agent.ended`); another process decides; a third resumes (`agent.resume`) to the typed
 *   output: the gated tool ran once on approve, never on deny (the model read the declined
 *   result), `agent.ended` is logged once. A resume before any decision stays `suspended` and
 *   sends nothing to the model.
 * - kill -9 of a process running a standalone typed agent (mid-stream, mid-tool): the next
 *   process that opens the session (here: `agent.resume`) recovers it, and the invocation ends
 *   with exactly one terminal `agent.ended` (`interrupted`) after its `run.ended`, carrying the
 *   usage its logged assistant messages add up to.
 * - kill -9 between `run.ended` and `agent.ended` (the append of `agent.ended` never happens):
 *   while that process lives, another that opens the session writes nothing; after the kill, the
 *   next process's recovery writes the one `agent.ended` (the run's `failed`, or `interrupted`
 *   for a run that ended `done`, whose answer was not judged), with the logged usage.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { errorResponse, hangResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";

const CHILD = fileURLToPath(new URL("./fixtures/agent-child.ts", import.meta.url));
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function spawnChild(args: string[]): ChildProcess & { output: Promise<any[]> } {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += String(chunk)));
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
  const output = new Promise<any[]>((resolve, reject) => {
    child.on("exit", (code, signal) => {
      if (code !== 0) reject(new Error(`child ${args[0]} exited ${code ?? signal}: ${stderr}`));
      else resolve(stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)));
    });
  });
  return Object.assign(child, { output });
}

async function setup() {
  const server: OpenAIServer = await startOpenAIServer();
  const dir = mkdtempSync(join(tmpdir(), "arbor-agent-processes-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => server.close());
  const db = join(dir, "arbor.db");
  const step = async (name: string, ...rest: string[]) => (await spawnChild([name, db, server.url, dir, ...rest]).output)[0];
  const events = async (sessionId: string) => {
    const log = createSqliteEventLog({ path: db, readOnly: true });
    try {
      return await log.readStream(sessionStreamId(sessionId));
    } finally {
      await log.close();
    }
  };
  return { server, dir, db, step, events };
}

const count = (events: { type: string }[], type: string) => events.filter((event) => event.type === type).length;

/** The sum of the logged assistant messages' usage, computed here from the entries. */
function loggedUsage(events: { type: string; data: unknown }[]) {
  const sum = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
  for (const event of events) {
    const message = event.type === "entry.appended" ? (event.data as { entry: { type: string; message?: { role: string; usage?: Record<keyof typeof sum, number | null> } } }).entry.message : undefined;
    if (message?.role !== "assistant" || !message.usage) continue;
    for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += message.usage[key] ?? 0;
  }
  return sum;
}

async function agentSessionId(db: string): Promise<string> {
  const log = createSqliteEventLog({ path: db, readOnly: true });
  try {
    const [created] = (await log.readAll()).filter((event) => event.type === "session.created" && (event.data as { metadata?: { agent?: string } }).metadata?.agent === "publisher");
    return (created.data as { sessionId: string }).sessionId;
  } finally {
    await log.close();
  }
}

describe("a typed agent stopped for approval, across processes", () => {
  for (const decision of ["approve", "deny"] as const) {
    it(`${decision}: A suspends naming the call, B decides, C resumes to the typed output; the gated tool ran ${decision === "approve" ? "once" : "never"}; one agent.ended`, async () => {
      const { server, dir, step, events } = await setup();
      server.script(
        toolCallResponse([{ id: "call_pub", name: "publish", arguments: { version: "1.2.0" } }]),
        textResponse(JSON.stringify(decision === "approve" ? { published: true, note: "1.2.0 is out" } : { published: false, note: "declined: not before the freeze ends" })),
      );
      const a = await step("run");
      expect(a).toMatchObject({ status: "suspended", pendingApprovals: ["call_pub"] });
      const afterA = await events(a.sessionId);
      expect(count(afterA, "agent.started")).toBe(1);
      expect(count(afterA, "agent.ended")).toBe(0);
      expect(afterA.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status)).toEqual(["suspended"]);
      expect(existsSync(join(dir, "published"))).toBe(false);

      // A resume before any decision stays suspended and sends nothing to the model.
      expect(await step("resume", a.sessionId)).toEqual({ status: "suspended", sessionId: a.sessionId, pendingApprovals: ["call_pub"] });
      expect(server.requests).toHaveLength(1);

      expect(await step("decide", a.sessionId, "call_pub", decision)).toMatchObject({ toolCallId: "call_pub", changed: true });
      const c = await step("resume", a.sessionId);
      expect(c).toEqual({
        status: "done",
        sessionId: a.sessionId,
        output: decision === "approve" ? { published: true, note: "1.2.0 is out" } : { published: false, note: "declined: not before the freeze ends" },
      });
      expect(existsSync(join(dir, "published")) ? readFileSync(join(dir, "published"), "utf8") : "").toBe(decision === "approve" ? "1.2.0\n" : "");
      const all = await events(a.sessionId);
      expect([count(all, "agent.started"), count(all, "agent.ended")]).toEqual([1, 1]);
      expect(all.at(-1)).toMatchObject({ type: "agent.ended", data: { status: "done", agent: "publisher" } });
      expect(all.filter((event) => event.type === "tool.ended").map((event) => (event.data as { outcome: string }).outcome)).toEqual([decision === "approve" ? "succeeded" : "denied"]);
      // The second request pairs the call with exactly one result: the tool's, or the declined one.
      expect(server.requests).toHaveLength(2);
      const results = server.requests[1].body.messages.filter((message: { role: string }) => message.role === "tool");
      expect(results.map((message: { tool_call_id: string }) => message.tool_call_id)).toEqual(["call_pub"]);
      expect(String(results[0].content)).toMatch(decision === "approve" ? /published 1\.2\.0/ : /declined.*not before the freeze ends/);
    }, 180_000);
  }
});

describe("kill -9 of a process running a standalone typed agent", () => {
  for (const at of ["mid-stream", "mid-tool"] as const) {
    it(`${at}: the next process recovers the session and the invocation ends with one agent.ended (interrupted)`, async () => {
      const { server, dir, db, step, events } = await setup();
      if (at === "mid-stream") server.script(hangResponse());
      else server.script(toolCallResponse([{ id: "call_slow", name: "slow", arguments: {} }]));
      const child = spawnChild(["run", db, server.url, dir]);
      child.output.catch(() => undefined);
      if (at === "mid-stream") await server.waitForRequests(1);
      else while (!existsSync(join(dir, "slow-started"))) await new Promise((resolve) => setTimeout(resolve, 20));
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGKILL");
      await exited;

      const log = createSqliteEventLog({ path: db, readOnly: true });
      const [created] = (await log.readAll()).filter((event) => event.type === "session.created" && (event.data as { metadata?: { agent?: string } }).metadata?.agent === "publisher");
      await log.close();
      const sessionId = (created.data as { sessionId: string }).sessionId;
      const before = await events(sessionId);
      expect([count(before, "agent.started"), count(before, "agent.ended"), count(before, "run.ended")]).toEqual([1, 0, 0]);

      const resumed = await step("resume", sessionId);
      expect(resumed).toEqual({ status: "interrupted", sessionId, code: "AGENT_RUN_FAILED" });
      const after = await events(sessionId);
      expect([count(after, "agent.started"), count(after, "agent.ended"), count(after, "run.ended")]).toEqual([1, 1, 1]);
      const runEnded = after.findIndex((event) => event.type === "run.ended");
      const agentEnded = after.findIndex((event) => event.type === "agent.ended");
      expect(after[runEnded].data).toMatchObject({ status: "interrupted" });
      expect(agentEnded).toBeGreaterThan(runEnded);
      expect(after[agentEnded].data).toMatchObject({ status: "interrupted", agent: "publisher", runId: (after[runEnded].data as { runId: string }).runId });
      // The usage is what the invocation's logged assistant messages used (mid-tool: the call's turn).
      const usage = loggedUsage(after);
      if (at === "mid-tool") expect(usage.totalTokens).toBeGreaterThan(0);
      expect((after[agentEnded].data as { usage: unknown }).usage).toEqual(usage);

      // Opening it again changes nothing: still one terminal event.
      await step("resume", sessionId);
      expect(count(await events(sessionId), "agent.ended")).toBe(1);
    }, 180_000);
  }
});

describe("kill -9 between run.ended and agent.ended of a standalone typed agent", () => {
  for (const ending of ["done", "failed"] as const) {
    it(`run ${ending}: no second writer while the process lives; after the kill, recovery writes the one agent.ended with the logged usage`, async () => {
      const { server, dir, db, step, events } = await setup();
      if (ending === "done") server.script(textResponse(JSON.stringify({ published: true, note: "1.2.0 is out" }), { usage: { input: 40, output: 9 } }));
      else server.script(toolCallResponse([{ id: "call_x", name: "nope", arguments: {} }], { usage: { input: 40, output: 9 } }), errorResponse(400, { error: { message: "bad request", type: "invalid_request_error" } }));
      const child = spawnChild(["run-stall", db, server.url, dir]);
      child.output.catch(() => undefined);
      while (!existsSync(join(dir, "agent-ended-stalled"))) await new Promise((resolve) => setTimeout(resolve, 20));
      const sessionId = await agentSessionId(db);
      const stalled = await events(sessionId);
      expect([count(stalled, "agent.started"), count(stalled, "run.ended"), count(stalled, "agent.ended")]).toEqual([1, 1, 0]);
      expect(stalled.find((event) => event.type === "run.ended")?.data).toMatchObject({ status: ending });

      // The process that ran it is alive (about to write agent.ended): opening the session elsewhere writes nothing.
      expect(await step("open", sessionId)).toEqual({ opened: sessionId });
      expect((await events(sessionId)).slice(stalled.length).map((event) => [event.type, event.data])).toEqual([]);

      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      expect(await step("open", sessionId)).toEqual({ opened: sessionId });
      const after = await events(sessionId);
      expect(after).toHaveLength(stalled.length + 1);
      const runId = (stalled.find((event) => event.type === "run.ended")!.data as { runId: string }).runId;
      expect(after.at(-1)).toMatchObject({
        type: "agent.ended",
        data: ending === "done" ? { status: "interrupted", agent: "publisher", runId, repairs: 0 } : { status: "failed", code: "AGENT_RUN_FAILED", agent: "publisher", runId, repairs: 0 },
      });
      expect((after.at(-1)!.data as { usage: { totalTokens: number } }).usage).toEqual(loggedUsage(after));
      expect(loggedUsage(after).totalTokens).toBeGreaterThan(0);

      // Once: opening again, or resuming, adds nothing and gives the recorded outcome.
      await step("open", sessionId);
      expect(await step("resume", sessionId)).toEqual({ status: ending === "done" ? "interrupted" : "failed", sessionId, code: "AGENT_RUN_FAILED" });
      expect(count(await events(sessionId), "agent.ended")).toBe(1);
      expect(await events(sessionId)).toHaveLength(after.length);
    }, 180_000);
  }
});

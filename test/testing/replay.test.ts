/**
 * Replay of logged runs: a run logged by a real harness over a real SQLite file is re-executed
 * with `replayModel`; the same code reports "identical", a changed tool output the first
 * divergent request. A real pi session, imported, replays too.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { importPiSession } from "../../src/adapters/pi-jsonl/import.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { formatReplayReport, replayModel, replayRun, ReplayError, scriptedModel } from "../../src/testing/index.ts";
import { sharedPath } from "../shared-dir.ts";

const files: Record<string, string> = { "a.txt": "alpha", "b.txt": "beta" };
const readTool = (suffix = "") =>
  defineTool({
    name: "read",
    description: "Reads a file",
    parameters: z.object({ path: z.string() }),
    async execute({ path }) {
      return { content: [{ type: "text", text: `${files[path]}${suffix}` }] };
    },
  });

let dir: string;
let log: EventLog;
afterEach(async () => {
  await log?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Logs a real run: read a.txt, then read b.txt and fail once with a retryable 503, then answer. */
async function loggedRun(): Promise<{ sessionId: string; runId: string }> {
  dir = mkdtempSync(join(tmpdir(), "arbor-replay-"));
  log = createSqliteEventLog({ path: join(dir, "arbor.db") });
  const model = scriptedModel(
    [
      { toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }], usage: { input: 12, output: 4 } },
      { text: "Reading the second file.", toolCalls: [{ id: "call_2", name: "read", arguments: { path: "b.txt" } }] },
      Object.assign(new Error("Service unavailable"), { statusCode: 503 }),
      { text: "Both files read: alpha and beta.", usage: { input: 40, output: 9, cached: 10 } },
    ],
    { provider: "openai.responses", modelId: "gpt-test" },
  );
  const harness = await createHarness({ eventLog: log, cwd: dir, models: { main: model }, tools: [readTool()], retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const outcome = await harness.prompt("read a.txt and b.txt");
  expect(outcome.status).toBe("done");
  await harness.waitForIdle();
  const sessionId = harness.id;
  await harness.close();
  return { sessionId, runId: outcome.runId };
}

describe("replayModel / replayRun over a logged run", () => {
  it("re-executes the run with the same code and reports identical; answers with the recorded streams", async () => {
    const { sessionId, runId } = await loggedRun();
    const report = await replayRun(log, sessionId, { runId, tools: [readTool()], harness: { retry: { baseDelayMs: 1, maxDelayMs: 5 } } });
    expect(report).toEqual({ identical: true, recordedCalls: 4, calls: 4 });
    expect(formatReplayReport(report)).toBe("identical (4 model calls)");

    // The recorded streams: text, tool calls, the retried error, usage.
    const model = await replayModel(log, sessionId, runId);
    // The recorded run's model (run.started), so the adapter converts the context as it did then.
    expect([model.provider, model.modelId]).toEqual(["openai", "gpt-test"]);
    expect(model.recorded.segments[0].calls.map((call) => call.summary)).toEqual([
      "toolUse calls read",
      'toolUse text "Reading the second file." calls read',
      "error (retried): 503 Service unavailable",
      'stop text "Both files read: alpha and beta."',
    ]);
    expect(model.recorded.segments[0].calls[3].answer).toMatchObject({ text: "Both files read: alpha and beta.", usage: { input: 40, output: 9, cached: 10 } });
  }, 60_000);

  it("after a tool's output changes, reports the first divergent request and what differs", async () => {
    const { sessionId, runId } = await loggedRun();
    const report = await replayRun(log, sessionId, { runId, tools: [readTool(" (v2)")], harness: { retry: { baseDelayMs: 1, maxDelayMs: 5 } } });
    expect(report.identical).toBe(false);
    expect(report.divergence).toMatchObject({ request: 2, kind: "message", recorded: "tool result read: alpha", actual: "tool result read: alpha (v2)" });
    expect(formatReplayReport(report)).toBe('diverged: request 2 differs at part 3: recorded "tool result read: alpha", now "tool result read: alpha (v2)"');
  }, 60_000);

  it("with the recorded tools (the default) a replay of the same code is identical; a new prompt diverges at request 1", async () => {
    const { sessionId } = await loggedRun();
    expect(await replayRun(log, sessionId, { harness: { retry: { baseDelayMs: 1, maxDelayMs: 5 } } })).toMatchObject({ identical: true, calls: 4 });
    const model = await replayModel(log, sessionId);
    const harness = await createHarness({ eventLog: createSqliteEventLog({ path: ":memory:" }), models: { replay: model }, tools: [readTool()], retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    await harness.prompt("read c.txt instead");
    await harness.close();
    expect(model.report().divergence).toMatchObject({ request: 1, kind: "message", part: 1, recorded: "user: read a.txt and b.txt", actual: "user: read c.txt instead" });
  }, 60_000);

  it("names an unknown run and an empty selection", async () => {
    const { sessionId } = await loggedRun();
    await expect(replayModel(log, sessionId, "run-nope")).rejects.toThrow(/has no run run-nope \(its runs: /);
    await expect(replayModel(log, sessionId, "run-nope")).rejects.toSatisfy((error: unknown) => ReplayError.isInstance(error) && error.code === "REPLAY_RUN_NOT_FOUND");
  }, 60_000);
});

describe("replay of a session imported from a real pi file", () => {
  it("replays every user turn of the branch with the recorded answers and tool results, identical", async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-replay-pi-"));
    log = createSqliteEventLog({ path: join(dir, "arbor.db") });
    const { session } = await importPiSession(createSessionRepository({ log }), sharedPath("real-inputs/sessions/pi-v1-large-session-prefix25.jsonl"));
    const model = await replayModel(log, session.id);
    const calls = model.recorded.segments.flatMap((segment) => segment.calls);
    expect(calls.length).toBeGreaterThan(3);
    expect(calls[0].summary).toBe("aborted");
    const report = await replayRun(log, session.id, { harness: { retry: { maxRetries: 0 } } });
    expect(report).toMatchObject({ identical: true, recordedCalls: calls.length, calls: calls.length });
  }, 60_000);
});

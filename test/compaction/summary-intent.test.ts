/**
 * Commit before effect for summary model calls: a compaction's and a branch summary's intent
 * (`summary.started`) is durable before the model is called, exactly one `summary.ended` closes
 * it (in the summary entry's own append when it succeeds), and recovery closes an intent whose
 * process was killed (`interrupted`). Real SQLite files, the real @ai-sdk/openai client against
 * a loopback server, a real child process killed with SIGKILL.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { compact } from "../../src/compaction/compact.ts";
import { moveTo } from "../../src/compaction/navigation.ts";
import { CompactionFailedError } from "../../src/core/errors.ts";
import { recoverSession } from "../../src/machines/recovery.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { errorResponse, hangResponse, startOpenAIServer, textResponse } from "../../src/testing/openai-server.ts";
import { appendTurns, newSession } from "./fixtures.ts";

const CHILD = fileURLToPath(new URL("./fixtures/summary-child.ts", import.meta.url));
const settings = { reserveTokens: 4096, keepRecentTokens: 2500 };
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function server() {
  const started = await startOpenAIServer();
  closers.push(() => started.close());
  const model = createOpenAIModel({ modelId: "gpt-test", baseURL: started.url, apiKey: "test", api: "chat", idleTimeoutMs: 0 });
  return { server: started, model };
}

const summaryEvents = (events: readonly StoredEvent[]) =>
  events.filter((event) => event.type.startsWith("summary.") || (event.type === "entry.appended" && ["compaction", "branch_summary"].includes((event.data as { entry: { type: string } }).entry.type)));

async function streamOf(log: EventLog, sessionId: string) {
  return log.readStream(sessionStreamId(sessionId));
}

describe("summary intents", () => {
  it("commit summary.started before the compaction's model request, and end it in the entry's own append", async () => {
    const { server: loopback, model } = await server();
    const { log, session } = await newSession("sqlite");
    await appendTurns(session, 6);
    let startedAtRequest: string[] = [];
    loopback.script(textResponse("## Goal\nSummary one."), textResponse("Prefix."));
    const waiting = loopback.waitForRequests(1).then(async () => {
      startedAtRequest = (await streamOf(log, session.id)).filter((event) => event.type.startsWith("summary.")).map((event) => event.type);
    });
    const entry = await compact(session, { model, settings });
    await waiting;
    expect(startedAtRequest).toEqual(["summary.started"]);

    const events = summaryEvents(await streamOf(log, session.id));
    expect(events.map((event) => event.type)).toEqual(["summary.started", "entry.appended", "summary.ended"]);
    const [started, appended, ended] = events;
    expect(started.data).toMatchObject({ kind: "compaction", reason: "manual" });
    expect(started.metadata.owner).toMatchObject({ pid: process.pid });
    expect(ended.data).toEqual({ summaryId: (started.data as { summaryId: string }).summaryId, kind: "compaction", status: "appended", entryId: entry.id });
    // One atomic append: the entry and its ending have consecutive versions and one commit.
    expect(ended.version).toBe(appended.version + 1);
  });

  it("end a failed summary call with status failed and append no compaction", async () => {
    const { server: loopback, model } = await server();
    const { log, session } = await newSession("sqlite");
    await appendTurns(session, 6);
    loopback.script(errorResponse(400, { error: { message: "bad request for the summary", type: "invalid_request_error" } }), errorResponse(400));
    await expect(compact(session, { model, settings })).rejects.toThrow();
    const events = summaryEvents(await streamOf(log, session.id));
    expect(events.map((event) => [event.type, (event.data as { status?: string }).status])).toEqual([
      ["summary.started", undefined],
      ["summary.ended", "failed"],
    ]);
  });

  it("end an aborted summary call with status cancelled", async () => {
    const { server: loopback, model } = await server();
    const { log, session } = await newSession("sqlite");
    await appendTurns(session, 6);
    loopback.script(hangResponse(), hangResponse());
    const controller = new AbortController();
    const compacting = compact(session, { model, settings, signal: controller.signal });
    await loopback.waitForRequests(1);
    controller.abort();
    await expect(compacting).rejects.toThrow();
    const statuses = summaryEvents(await streamOf(log, session.id)).map((event) => (event.data as { status?: string }).status ?? event.type);
    expect(statuses).toEqual(["summary.started", "cancelled"]);
  });

  it("log the intent of a branch summary and end it with the branch_summary entry", async () => {
    const { server: loopback, model } = await server();
    const { log, session } = await newSession("sqlite");
    await appendTurns(session, 3);
    const target = session.view.getBranch()[1].id;
    loopback.script(textResponse("Tried something else."));
    const result = await moveTo(session, target, { summarize: true, model });
    const events = summaryEvents(await streamOf(log, session.id));
    expect(events.map((event) => event.type)).toEqual(["summary.started", "entry.appended", "summary.ended"]);
    expect(events[0].data).toMatchObject({ kind: "branch_summary", reason: "navigation" });
    expect(events[2].data).toMatchObject({ kind: "branch_summary", status: "appended", entryId: result.summaryEntry?.id });

    loopback.script(errorResponse(400), errorResponse(400));
    await expect(moveTo(session, session.view.getBranch()[0].id, { summarize: true, model })).rejects.toThrow(CompactionFailedError);
    const last = summaryEvents(await streamOf(log, session.id)).slice(-2);
    expect(last.map((event) => (event.data as { status?: string }).status ?? event.type)).toEqual(["summary.started", "failed"]);
  });

  it("are closed as interrupted by recovery after the process was killed mid-call, once", async () => {
    const { server: loopback } = await server();
    const dbPath = join(mkdtempSync(join(tmpdir(), "arbor-summary-")), "arbor.db");
    const log = createSqliteEventLog({ path: dbPath });
    const session = await createSessionRepository({ log }).create({ cwd: "/work" });
    await appendTurns(session, 6);
    await log.close();
    loopback.script(hangResponse(), hangResponse());
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, dbPath, session.id, loopback.url], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    const exitedEarly = new Promise<never>((_, reject) => child.on("exit", () => reject(new Error(`child exited before its summary request: ${stderr}`))));
    exitedEarly.catch(() => undefined);
    await Promise.race([loopback.waitForRequests(1), exitedEarly]);
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const reopenedLog = createSqliteEventLog({ path: dbPath });
    closers.push(() => reopenedLog.close());
    const reopened = await createSessionRepository({ log: reopenedLog }).open(session.id);
    expect(summaryEvents(await streamOf(reopenedLog, session.id)).map((event) => event.type)).toEqual(["summary.started"]);
    const report = await recoverSession(reopened);
    expect(report.interruptedSummaryIds).toHaveLength(1);
    const events = summaryEvents(await streamOf(reopenedLog, session.id));
    expect(events.map((event) => (event.data as { status?: string }).status ?? event.type)).toEqual(["summary.started", "interrupted"]);
    expect((events[1].data as { message: string }).message).toMatch(/no summary was appended/);
    expect(reopened.view.getEntries().some((entry) => entry.type === "compaction")).toBe(false);
    expect((await recoverSession(reopened)).interruptedSummaryIds).toBeUndefined();
  });
});

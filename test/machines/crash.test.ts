/**
 * Crash tests: a child process runs a real run (SQLite file, real @ai-sdk/openai
 * client, loopback OpenAI server) and is SIGKILLed mid-stream, mid-tool, and
 * between two tool results. Reopening must recover: valid pairing, the partial
 * message closed as aborted, synthetic "interrupted" results, nothing duplicated,
 * and a working continue().
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import type { AssistantMessage, ToolResultMessage } from "../../src/core/messages.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { recoverSession } from "../../src/machines/recovery.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/openai-server.ts";
import { tempDbPath } from "./helpers.ts";
import { checkResultsPaired } from "./run-checks.ts";

const CHILD = fileURLToPath(new URL("./fixtures/crash-child.ts", import.meta.url));
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

type CrashMode = "mid-stream" | "mid-tool" | "between-results" | "tool-marker" | "model-request";

async function crashAt(mode: CrashMode) {
  const server = await startOpenAIServer();
  closers.push(() => server.close());
  const path = tempDbPath();
  const markerPath = join(dirname(path), "marker");
  const setupLog = createSqliteEventLog({ path });
  const session = await createSessionRepository({ log: setupLog }).create({ cwd: "/tmp" });
  await setupLog.close();
  if (mode === "mid-stream") server.script(hangResponse("partial answer that never"));
  if (mode === "mid-tool") server.script(toolCallResponse([{ id: "call_stuck", name: "stuck", arguments: {} }]));
  if (mode === "between-results") {
    server.script(toolCallResponse([
      { id: "call_stuck", name: "stuck", arguments: {} },
      { id: "call_quick", name: "quick", arguments: {} },
    ]));
  }
  if (mode === "tool-marker") server.script(toolCallResponse([{ id: "call_marker", name: "marker", arguments: {} }]));
  if (mode === "model-request") server.script(hangResponse());
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, path, session.id, server.url, mode, markerPath], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += String(chunk)));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  const exitedEarly = new Promise<never>((_, reject) => child.on("exit", () => reject(new Error(`child exited before the kill point: ${stderr}`))));
  exitedEarly.catch(() => undefined);
  const killPoint =
    mode === "tool-marker"
      ? pollUntil(() => existsSync(markerPath))
      : mode === "model-request"
        ? server.waitForRequests(1)
        : new Promise<void>((resolve) => {
            child.stdout.on("data", (chunk) => {
              if (String(chunk).includes("KILL_ME")) resolve();
            });
          });
  await Promise.race([killPoint, exitedEarly]);
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");

  const log = createSqliteEventLog({ path });
  closers.push(() => log.close());
  const reopened = await createSessionRepository({ log }).open(session.id);
  return { server, log, session: reopened };
}

/** Polls a condition (for a file another process creates); the kill follows the observation, never a timer. */
async function pollUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("crash recovery (SIGKILL of a real run)", () => {
  it("mid-stream: the partial message is closed as aborted and continue() works", async () => {
    const { server, session } = await crashAt("mid-stream");
    const agent = createAgent({ session, model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) });
    server.script(textResponse("a whole answer"));
    const outcome = await agent.continue();
    expect(outcome.status).toBe("done");
    const context = session.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    const summary = context.messages.map((m) => `${m.role}:${m.role === "assistant" ? m.stopReason : ""}`);
    expect(summary).toEqual(["user:", "assistant:aborted", "assistant:stop"]);
    const partial = context.messages[1] as AssistantMessage;
    expect(partial.content[0]).toMatchObject({ type: "text" });
    expect((partial.content[0] as { text: string }).text.length).toBeGreaterThan(0);
    expect(partial.errorMessage).toMatch(/Interrupted/);
    await agent.dispose();
  }, 60_000);

  it("mid-tool: the running tool gets an 'interrupted' result and is not re-run", async () => {
    const { server, session, log } = await crashAt("mid-tool");
    const agent = createAgent({ session, model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) });
    server.script(textResponse("ok, it was interrupted"));
    const outcome = await agent.continue();
    expect(outcome.status).toBe("done");
    const context = session.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    checkResultsPaired(context.messages);
    const result = context.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
    expect(result).toMatchObject({ toolCallId: "call_stuck", isError: true });
    expect((result.content[0] as { text: string }).text).toMatch(/interrupted.*may not have finished.*not re-run.*may need to be run again/);
    const events = await log.readStream(`session-${session.id}`);
    expect(events.filter((e) => isEventOfType(e, "run.ended") && e.data.status === "interrupted")).toHaveLength(1);
    expect(events.filter((e) => e.type === "tool.started").map((e) => (e.data as { toolCallId: string }).toolCallId)).toEqual(["call_stuck"]);
    // The continued request carried the synthetic result for the interrupted call.
    const body = server.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string }[] };
    expect(body.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_stuck"]);
    await agent.dispose();
  }, 60_000);

  it("between two results: the finished sibling survives, the other is interrupted", async () => {
    const { server, session } = await crashAt("between-results");
    expect(await recoverSession(session)).toMatchObject({ recovered: true, interruptedToolCallIds: ["call_stuck"] });
    // Idempotent: the run now has its terminal event.
    expect(await recoverSession(session)).toMatchObject({ recovered: false });
    const agent = createAgent({ session, model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) });
    server.script(textResponse("done"));
    expect((await agent.continue()).status).toBe("done");
    const context = session.view.buildContext();
    // Results are committed in completion order; the context puts them back in call order, which is no repair.
    expect(context.diagnostics).toEqual([]);
    checkResultsPaired(context.messages);
    const results = context.messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["call_stuck", true],
      ["call_quick", false],
    ]);
    expect(context.messages.filter((m) => m.role === "user")).toHaveLength(1);
    await agent.dispose();
  }, 60_000);

  it("commit before effect: a tool killed by its first act left the prompt, the call and tool.started in the log", async () => {
    const { server, session, log } = await crashAt("tool-marker");
    const before = await log.readStream(`session-${session.id}`);
    const entries = before.filter((e) => e.type === "entry.appended").map((e) => (e.data as { entry: { type: string; message?: AssistantMessage | { role: string } } }).entry);
    const messages = entries.flatMap((entry) => (entry.type === "message" && entry.message ? [entry.message] : []));
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const assistant = messages[1] as AssistantMessage;
    expect(assistant.content.filter((block) => block.type === "toolCall").map((block) => (block as { id: string }).id)).toEqual(["call_marker"]);
    expect(before.filter((e) => e.type === "tool.started").map((e) => (e.data as { toolCallId: string }).toolCallId)).toEqual(["call_marker"]);
    expect(before.some((e) => e.type === "run.started")).toBe(true);

    expect(await recoverSession(session)).toMatchObject({ recovered: true, interruptedToolCallIds: ["call_marker"] });
    const context = session.view.buildContext();
    expect(context.diagnostics).toEqual([]);
    checkResultsPaired(context.messages);
    const result = context.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
    expect(result).toMatchObject({ toolCallId: "call_marker", isError: true });
    expect((result.content[0] as { text: string }).text).toMatch(/interrupted/);
    void server;
  }, 60_000);

  it("commit before effect: killed while the first model request is in flight, the prompt is durable", async () => {
    const { server, session, log } = await crashAt("model-request");
    expect(server.requests).toHaveLength(1);
    const events = await log.readStream(`session-${session.id}`);
    expect(events.some((e) => e.type === "run.started")).toBe(true);
    const users = session.view.buildContext().messages.filter((m) => m.role === "user");
    expect(users.map((m) => (m.content as { text: string }[])[0].text)).toEqual(["please work"]);
    expect(await recoverSession(session)).toMatchObject({ recovered: true });
  }, 60_000);
});

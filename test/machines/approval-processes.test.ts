/**
 * The acceptance test of issue 13 item 1: real child processes over one real SQLite file and
 * the real @ai-sdk/openai client against a loopback OpenAI server. Process A runs until a call
 * awaits approval and exits; process B approves (or denies) and exits; process C continues.
 * The gated tool ran exactly once (approve) or never (deny), the log holds every item once, and
 * the next model request pairs every call with exactly one result (beats OpenAI Agents JS #701,
 * a resumed run writing the same tool call twice, and #1435, a resumed approval re-sending an
 * acknowledged tool output).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/openai-server.ts";
import { sessionEvents, tempDbPath } from "./helpers.ts";

const CHILD = fileURLToPath(new URL("./fixtures/approval-child.ts", import.meta.url));
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** Runs one step in a fresh child process; resolves with its JSON output lines once it exited 0. */
function step(args: string[]): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`child ${args[0]} exited ${code}: ${stderr}`));
      else resolve(stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)));
    });
  });
}

async function flow(decision: "approve" | "deny") {
  const server = await startOpenAIServer();
  closers.push(() => server.close());
  server.script(
    toolCallResponse([
      { id: "call_count", name: "counter", arguments: { note: "once" } },
      { id: "call_echo", name: "echo", arguments: { text: "hi" } },
    ]),
    textResponse("all done"),
  );
  const path = tempDbPath();
  const counterPath = join(dirname(path), "counter");
  const setupLog = createSqliteEventLog({ path });
  const created = await createSessionRepository({ log: setupLog }).create({ cwd: "/tmp" });
  await setupLog.close();
  const common = [path, created.id, server.url, counterPath];

  const [ranA] = await step(["run", ...common]);
  expect(ranA).toEqual({ status: "suspended", pendingApprovals: ["call_count"], operation: "awaiting-approval" });
  expect(existsSync(counterPath)).toBe(false);
  expect(server.requests).toHaveLength(1);

  const decided = await step([decision, ...common, "call_count", decision === "deny" ? "not today" : "looks fine"]);
  expect(decided[0]).toEqual({ operation: "awaiting-approval", pending: ["call_count"] });
  expect(decided[1]).toEqual({ toolCallId: "call_count", status: decision === "approve" ? "approved" : "denied", changed: true, undecided: [] });
  // A repeated identical decision in yet another process is a no-op.
  const again = await step([decision, ...common, "call_count", decision === "deny" ? "not today" : "looks fine"]);
  expect(again[1]).toMatchObject({ changed: false });
  expect(server.requests).toHaveLength(1);

  const continued = await step(["continue", ...common]);
  expect(continued).toEqual([{ operation: "awaiting-approval" }, { status: "done", operation: "idle" }]);
  expect(server.requests).toHaveLength(2);

  const log = createSqliteEventLog({ path });
  closers.push(() => log.close());
  const events = await sessionEvents(log, created.id);
  const count = (type: string, id: string) => events.filter((event) => event.type === type && (event.data as { toolCallId?: string }).toolCallId === id).length;
  for (const id of ["call_count", "call_echo"]) {
    expect(count("tool.started", id)).toBe(1);
    expect(count("tool.ended", id)).toBe(1);
  }
  expect(count("approval.requested", "call_count")).toBe(1);
  expect(count("approval.ended", "call_count")).toBe(1);
  expect(count("approval.requested", "call_echo")).toBe(0);
  const entries = events.filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { type: string; message?: { role: string; toolCallId?: string; content?: unknown } } }).entry);
  const messages = entries.filter((entry) => entry.type === "message").map((entry) => entry.message!);
  expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
  expect(messages.filter((message) => message.role === "toolResult").map((message) => message.toolCallId).sort()).toEqual(["call_count", "call_echo"]);
  expect(events.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status)).toEqual(["suspended", "done"]);

  // The next model request pairs every call with exactly one result.
  const body = server.requests[1].body as { messages: { role: string; tool_call_id?: string; content?: unknown; tool_calls?: { id: string }[] }[] };
  const callIds = body.messages.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? []);
  expect(callIds).toEqual(["call_count", "call_echo"]);
  const results = body.messages.filter((message) => message.role === "tool");
  expect(results.map((message) => message.tool_call_id).sort()).toEqual(["call_count", "call_echo"]);
  return { counterPath, results };
}

describe("approval across processes (issue 13 acceptance)", () => {
  it("A asks and exits, B approves, C continues: the tool ran once, the log holds each item once, the next request pairs every call with one result", async () => {
    const { counterPath, results } = await flow("approve");
    expect(readFileSync(counterPath, "utf8")).toBe("1\n");
    expect(JSON.stringify(results.find((message) => message.tool_call_id === "call_count")!.content)).toContain("counted");
  }, 60_000);

  it("the same with deny: the tool never ran and the model got the user's refusal with the reason", async () => {
    const { counterPath, results } = await flow("deny");
    expect(existsSync(counterPath)).toBe(false);
    const denied = JSON.stringify(results.find((message) => message.tool_call_id === "call_count")!.content);
    expect(denied).toContain("The user declined");
    expect(denied).toContain("not today");
  }, 60_000);
});

/**
 * The kill -9 matrix of issue 13: the three-step review workflow (an agent, a fan-out of two
 * agents, an approval gate; then an artifact) runs in a real child process over a real SQLite
 * file and the real @ai-sdk/openai client against the loopback OpenAI server, and is SIGKILLed
 * right after one of 10 events commits. Later processes resume it (approving the gate from the
 * log when it waits) until it ends. Every resume must reach the uninterrupted run's output, each
 * agent's side effect (a line in the counter file) happens once, each step ends once in the log,
 * and each agent step keeps one session.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { sessionIdOfStream } from "../../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { workflowStreamId } from "../../src/workflows/fold.ts";
import { decideWorkflowApproval } from "../../src/workflows/runs.ts";
import { respond } from "./fixtures/review-workflow.ts";

const CHILD = fileURLToPath(new URL("./fixtures/workflow-child.ts", import.meta.url));
let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer({ respond });
});
afterAll(async () => {
  await server.close();
});

function child(args: string[]): Promise<{ signal: NodeJS.Signals | null; code: number | null; outcome?: any; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk) => (stdout += String(chunk)));
    proc.stderr.on("data", (chunk) => (stderr += String(chunk)));
    proc.on("exit", (code, signal) => {
      const line = stdout.trim().split("\n").filter(Boolean).at(-1);
      resolve({ code, signal, stderr, ...(line ? { outcome: JSON.parse(line) } : {}) });
    });
  });
}

/** Runs the workflow to its end in as many processes as it takes; returns what the runs left. */
async function drive(killAt: string) {
  const dir = mkdtempSync(join(tmpdir(), "arbor-wf-crash-"));
  const db = join(dir, "arbor.db");
  const marker = join(dir, "killed");
  const workflowId = "review-1";
  const trail: string[] = [];
  let mode = "run";
  let outcome: any;
  for (let round = 0; round < 8; round++) {
    const result = await child([mode, db, dir, server.url, workflowId, killAt, marker]);
    if (result.signal === "SIGKILL") {
      trail.push(`${mode}:killed`);
      mode = "resume";
      continue;
    }
    expect(result.code, result.stderr).toBe(0);
    outcome = result.outcome;
    trail.push(`${mode}:${outcome.status}`);
    if (outcome.status !== "suspended") break;
    const log = createSqliteEventLog({ path: db });
    await decideWorkflowApproval(log, workflowId, "ship", { status: "approved", reason: "ok" });
    await log.close();
    mode = "resume";
  }
  const log = createSqliteEventLog({ path: db });
  const workflowEvents = await log.readStream(workflowStreamId(workflowId));
  const sessions: Record<string, string[]> = {};
  const effects: string[] = [];
  for (const stream of await log.listStreams()) {
    const sessionId = sessionIdOfStream(stream.streamId);
    if (!sessionId) continue;
    for (const event of await log.readStream(stream.streamId)) {
      if (isEventOfType(event, "tool.started") && event.data.toolName === "effect") effects.push(sessionId);
    }
  }
  for (const event of workflowEvents) if (isEventOfType(event, "step.updated")) (sessions[event.data.stepId] ??= []).push(event.data.sessionId);
  await log.close();
  const counter = existsSync(join(dir, "counter")) ? readFileSync(join(dir, "counter"), "utf8").trim().split("\n").sort() : [];
  const report = existsSync(join(dir, "report.txt")) ? readFileSync(join(dir, "report.txt"), "utf8") : undefined;
  const killed = existsSync(marker);
  rmSync(dir, { recursive: true, force: true });
  return { outcome, trail, workflowEvents, sessions, effects, counter, report, killed };
}

const KILL_POINTS = [
  "workflow:step.updated:triage",
  "session:run.started:triage",
  "session:tool.ended:triage",
  "session:agent.ended:triage",
  "workflow:step.ended:triage",
  "workflow:step.started:reviews",
  "session:tool.ended:style",
  "workflow:step.ended:safety",
  "workflow:approval.requested:ship",
  "workflow:step.ended:report",
];

describe("workflow kill -9 matrix", () => {
  let baseline: Awaited<ReturnType<typeof drive>>;
  beforeAll(async () => {
    baseline = await drive("-");
  }, 120_000);

  it("the uninterrupted run: suspended at the gate, then done, each effect once", () => {
    expect(baseline.trail).toEqual(["run:suspended", "resume:done"]);
    expect(baseline.outcome.status).toBe("done");
    expect(baseline.outcome.output).toMatchObject({ triage: "triage-ok", style: "style-ok", safety: "safety-ok", approved: true });
    expect(baseline.counter).toEqual(["safety", "style", "triage"]);
  });

  it.each(KILL_POINTS)("killed after %s: the resume reaches the same output, no effect repeated", async (killAt) => {
    const run = await drive(killAt);
    expect(run.killed).toBe(true);
    expect(run.trail.filter((entry) => entry.endsWith(":killed"))).toHaveLength(1);
    expect(run.outcome?.status, run.trail.join(" > ")).toBe("done");
    expect(run.outcome.output).toEqual(baseline.outcome.output);
    expect(run.report).toBe(baseline.report);
    // No side effect repeated: each agent's effect ran once, in one session per agent step.
    expect(run.counter).toEqual(["safety", "style", "triage"]);
    expect(run.effects).toHaveLength(3);
    for (const stepId of ["triage", "style", "safety"]) expect(new Set(run.sessions[stepId])).toHaveProperty("size", 1);
    // Each step ended once; the run ended once.
    const ended = run.workflowEvents.filter((event) => event.type === "step.ended").map((event) => (event.data as { stepId: string }).stepId).sort();
    expect(ended).toEqual(["report", "reviews", "safety", "ship", "style", "triage"]);
    expect(run.workflowEvents.filter((event) => event.type === "workflow.ended")).toHaveLength(1);
    expect(run.workflowEvents.filter((event) => event.type === "approval.requested")).toHaveLength(1);
  }, 120_000);
});

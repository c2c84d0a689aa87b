/**
 * A run's own policy survives a crash: `arbor run --approve bash` / `--budget turns=1` is killed with SIGKILL while the model streams, and
 * `arbor resume` (another process, without those flags) continues it from the log. The policy recorded in `run.started` holds there: the bash
 * call waits for approval (never runs before it, exit 3), the turn limit ends the run `budget_exceeded` (exit 4). Once the call is approved,
 * `arbor resume` says every call is decided (not "waiting for approval"), and `arbor run --session` runs it once. Real CLI processes, a real
 * SQLite file, @ai-sdk/openai against the loopback server.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hangResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { loggedEvents, type LoggedEvent } from "./logged-events.ts";

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
});

const env = { OPENAI_API_KEY: "test-key" };
const modelArgs = () => ["--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir];

/** The events of this test's log (polled until `until` holds for one of them, when given). */
const eventsOf = (until?: (event: LoggedEvent) => boolean): Promise<LoggedEvent[]> => loggedEvents(db, until);

/** `arbor run <flags> <prompt>` killed with SIGKILL once the model's reply streams (its partial text is logged). */
async function runAndKillMidStream(flags: string[]): Promise<void> {
  server.script(hangResponse("let me think"));
  let child: ChildProcess | undefined;
  const run = runArbor(["--db", db, "run", ...flags, ...modelArgs(), "clean up"], { env, onSpawn: (spawned) => (child = spawned) });
  // The log file is created and migrated before the model is asked: only then is it read here.
  await server.waitForRequests(1);
  await eventsOf((event) => event.type === "message.delta");
  child!.kill("SIGKILL");
  expect((await run).signal).toBe("SIGKILL");
}

describe("arbor resume keeps the policy the run was started with", () => {
  it("--approve bash: after the crash the bash call waits for approval; approved, it runs once", { timeout: 180_000 }, async () => {
    await runAndKillMidStream(["--approve", "bash"]);
    const started = (await eventsOf()).find((event) => event.type === "run.started");
    expect(started?.data.policy).toEqual({ requireApproval: ["bash"] });

    server.script(toolCallResponse([{ id: "call_bash", name: "bash", arguments: { command: "echo ran >> c.txt" } }]), textResponse("cleaned"));
    const resumed = await runArbor(["--db", db, "resume", "latest", ...modelArgs()], { env });
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(existsSync(join(dir, "c.txt"))).toBe(false);
    expect(resumed.stdout).toMatch(/call_bash bash pending/);
    expect(resumed.stderr).toContain("waiting for approval of 1 tool call(s)");
    const events = await eventsOf();
    expect(events.filter((event) => event.type === "run.resumed")).toHaveLength(1);
    expect(events.filter((event) => event.type === "approval.requested").map((event) => event.data.toolName)).toEqual(["bash"]);
    expect(events.filter((event) => event.type === "run.ended").map((event) => event.data.status)).toEqual(["suspended"]);

    const approvals = await runArbor(["--db", db, "approvals"]);
    const [session, callId] = approvals.stdout.trim().split(" ");
    expect(callId).toBe("call_bash");
    expect((await runArbor(["--db", db, "approve", session, callId])).code).toBe(0);

    // Every waiting call is decided: resume says so, and does not count the approved call as waiting.
    const decided = await runArbor(["--db", db, "resume", session, ...modelArgs()], { env });
    expect(decided.code, decided.stderr).toBe(3);
    expect(decided.stderr).not.toContain("waiting for approval");
    expect(decided.stderr).toContain(`every waiting tool call is decided (1); go on with: arbor run --session ${session}`);

    const finished = await runArbor(["--db", db, "run", "--session", session, ...modelArgs()], { env });
    expect(finished.code, finished.stderr).toBe(0);
    expect(readFileSync(join(dir, "c.txt"), "utf8")).toBe("ran\n");
  });

  it("--approve bash: going on with arbor run --session (no prompt) after the crash keeps the gate too", { timeout: 180_000 }, async () => {
    await runAndKillMidStream(["--approve", "bash"]);
    server.script(toolCallResponse([{ id: "call_bash", name: "bash", arguments: { command: "echo ran >> c.txt" } }]), textResponse("cleaned"));
    const continued = await runArbor(["--db", db, "run", "--session", "latest", ...modelArgs()], { env });
    expect(existsSync(join(dir, "c.txt"))).toBe(false);
    expect(continued.code, continued.stderr).toBe(3);
    const events = await eventsOf();
    // The killed run closed interrupted by recovery, then a continue run with the killed run's policy.
    expect(events.filter((event) => event.type === "run.started").map((event) => [event.data.kind, event.data.policy])).toEqual([
      ["prompt", { requireApproval: ["bash"] }],
      ["continue", { requireApproval: ["bash"] }],
    ]);
    expect(events.filter((event) => event.type === "approval.requested").map((event) => event.data.toolName)).toEqual(["bash"]);
  });

  it("--budget turns=1: after the crash the continued run ends budget_exceeded (exit 4), not done", { timeout: 180_000 }, async () => {
    await runAndKillMidStream(["--budget", "turns=1"]);
    const started = (await eventsOf()).find((event) => event.type === "run.started");
    expect(started?.data.policy).toEqual({ budget: { maxTurns: 1 } });

    server.script(toolCallResponse([{ id: "call_bash", name: "bash", arguments: { command: "echo ran >> c.txt" } }]), textResponse("cleaned"));
    const resumed = await runArbor(["--db", db, "resume", "latest", ...modelArgs()], { env });
    expect(resumed.code, resumed.stderr).toBe(4);
    expect(resumed.stderr).toContain("maxTurns");
    const ended = (await eventsOf()).filter((event) => event.type === "run.ended");
    expect(ended.map((event) => event.data.status)).toEqual(["budget_exceeded"]);
    expect(ended[0].data).toMatchObject({ scope: "run", limit: "maxTurns" });
  });
});

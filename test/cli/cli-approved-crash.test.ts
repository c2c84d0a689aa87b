/**
 * An approved call runs at most once: `arbor run --approve bash` stops for approval, the call is approved, and the `resume` run executing it
 * (`arbor run --session`) is killed with SIGKILL while bash runs. The call's `tool.started` belongs to the suspended run, yet recovery (`arbor run
 * --session`) and the continuation (`arbor resume`) give it the `interrupted` result, end its orphaned process group, and never execute it again.
 * Real CLI processes, a real SQLite file, the real bash tool, @ai-sdk/openai against the loopback server.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
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
// Each execution logs a line to s.txt; the first one waits (killed with its CLI), a second one would finish at once and write c1.txt.
const COMMAND = "echo started >> s.txt; [ $(wc -l < s.txt) -gt 1 ] || sleep 60; echo first >> c1.txt";

/** The events of this test's log (polled until `until` holds for one of them, when given). */
const eventsOf = (until?: (event: LoggedEvent) => boolean): Promise<LoggedEvent[]> => loggedEvents(db, until);

const isAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls until the process group is gone (false when it still runs after 15 s). */
async function groupEnds(pgid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (!isAlive(pgid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** The approved call's resume run killed with SIGKILL while bash runs: the session id and the bash process group. */
async function approveThenKillTheResumeRun(): Promise<{ session: string; pgid: number }> {
  server.script(toolCallResponse([{ id: "call_bash", name: "bash", arguments: { command: COMMAND } }]));
  const asked = await runArbor(["--db", db, "run", "--approve", "bash", ...modelArgs(), "clean up"], { env });
  expect(asked.code, asked.stderr).toBe(3);
  const [session, callId] = (await runArbor(["--db", db, "approvals"])).stdout.trim().split(" ");
  expect(callId).toBe("call_bash");
  expect((await runArbor(["--db", db, "approve", session, callId])).code).toBe(0);

  let child: ChildProcess | undefined;
  const run = runArbor(["--db", db, "run", "--session", session, ...modelArgs()], { env, onSpawn: (spawned) => (child = spawned) });
  const events = await eventsOf((event) => event.type === "tool.updated" && event.data.process !== undefined);
  const pgid = (events.find((event) => event.type === "tool.updated" && event.data.process !== undefined)!.data.process as { pgid: number }).pgid;
  // The group is running bash (it logged its first line).
  await eventsOf(() => existsSync(join(dir, "s.txt")));
  child!.kill("SIGKILL");
  expect((await run).signal).toBe("SIGKILL");
  expect(isAlive(pgid)).toBe(true);
  return { session, pgid };
}

function expectInterruptedOnce(events: LoggedEvent[]): void {
  const ended = events.filter((event) => event.type === "tool.ended" && event.data.toolCallId === "call_bash");
  expect(ended.map((event) => event.data.outcome)).toEqual(["interrupted"]);
  expect(events.filter((event) => event.type === "tool.started" && event.data.toolCallId === "call_bash")).toHaveLength(1);
  expect(readFileSync(join(dir, "s.txt"), "utf8")).toBe("started\n");
  expect(existsSync(join(dir, "c1.txt"))).toBe(false);
}

describe("an approved call whose resume run was killed runs at most once", () => {
  it("arbor run --session: recovery interrupts it and ends its process group; the run goes on without it", { timeout: 180_000 }, async () => {
    const { session, pgid } = await approveThenKillTheResumeRun();
    server.script(textResponse("cleaned"));
    const next = await runArbor(["--db", db, "run", "--session", session, ...modelArgs()], { env });
    expect(next.code, next.stderr).toBe(0);
    expect(await groupEnds(pgid)).toBe(true);
    const events = await eventsOf();
    expectInterruptedOnce(events);
    const interrupted = events.filter((event) => event.type === "run.ended" && event.data.status === "interrupted");
    expect(interrupted.map((event) => event.data.interruptedToolCallIds)).toEqual([["call_bash"]]);
  });

  it("arbor resume: the continuation takes the run over, interrupts the call and ends its process group", { timeout: 180_000 }, async () => {
    const { session, pgid } = await approveThenKillTheResumeRun();
    server.script(textResponse("cleaned"));
    const resumed = await runArbor(["--db", db, "resume", session, ...modelArgs()], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await groupEnds(pgid)).toBe(true);
    const events = await eventsOf();
    expectInterruptedOnce(events);
    expect(events.filter((event) => event.type === "run.resumed").map((event) => event.data.interruptedToolCallIds)).toEqual([["call_bash"]]);
    expect(events.filter((event) => event.type === "run.ended").map((event) => event.data.status)).toEqual(["suspended", "done"]);
  });
});

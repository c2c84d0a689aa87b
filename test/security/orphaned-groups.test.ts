/**
 * Issue 19 finding 5: after kill -9 of the agent, the process group its bash call started keeps
 * running. The group (pgid and the leader's start time) is logged in `tool.updated` right after the
 * spawn; recovery ends it when it is still alive and the start time matches, and the synthetic
 * result says what was done. Real `arbor` processes, real bash children, kill -9, a real SQLite file.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { orphanStatus, processStartOf } from "../../src/core/process-group.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;
const stray: number[] = [];

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir("arbor-orphans-");
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
  for (const pgid of stray.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

const env = { OPENAI_API_KEY: "test-key" };
const runArgs = () => ["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir];

/** Members of the group that are not zombies, from /proc. */
function members(pgid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z") found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${what}`);
}

async function recordedGroup(): Promise<{ pgid: number; processStart?: string; host: string } | undefined> {
  if (!existsSync(db)) return undefined;
  const log = createSqliteEventLog({ path: db });
  try {
    const event = (await log.readAll()).find((stored) => stored.type === "tool.updated" && (stored.data as { process?: unknown }).process);
    return (event?.data as { process?: { pgid: number; processStart?: string; host: string } } | undefined)?.process;
  } catch {
    return undefined;
  } finally {
    await log.close();
  }
}

/** Starts `arbor run` whose model calls bash with `command`, waits for the group to be logged, kills the agent with SIGKILL. */
async function crashWhileRunning(command: string) {
  server.script(toolCallResponse([{ id: "call_sleep", name: "bash", arguments: { command } }]));
  let agent: import("node:child_process").ChildProcess | undefined;
  const running = runArbor([...runArgs(), "start it"], { env, onSpawn: (child) => (agent = child) });
  let group: Awaited<ReturnType<typeof recordedGroup>>;
  await until(async () => (group = await recordedGroup()) !== undefined, "tool.updated with the process group");
  stray.push(group!.pgid);
  await until(() => members(group!.pgid).length >= 2, "the command's processes");
  agent!.kill("SIGKILL");
  expect((await running).signal).toBe("SIGKILL");
  return group!;
}

async function lastToolResultText(): Promise<string> {
  const sessionId = (JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string }[])[0].id;
  const context = JSON.parse((await runArbor(["--db", db, "context", sessionId, "--json"])).stdout) as { messages: any[] };
  return context.messages.filter((message) => message.role === "toolResult").at(-1).content[0].text as string;
}

describe("process groups that outlive a killed agent", { timeout: 180_000 }, () => {
  it("are ended by recovery when still alive and started by the dead owner, and the result says so", async () => {
    const group = await crashWhileRunning("sleep 600 & sleep 600");
    expect(group.processStart).toBe(processStartOf(group.pgid));
    // The orphans run on after the agent died (what old main left behind).
    expect(members(group.pgid).length).toBeGreaterThanOrEqual(2);

    server.script(textResponse("noted"));
    const resumed = await runArbor([...runArgs(), "--continue"], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    await until(() => members(group.pgid).length === 0, "the orphaned group to end");
    const text = await lastToolResultText();
    expect(text).toContain(`Its process group ${group.pgid} was still running; it was ended (SIGKILL) when this result was recorded.`);
    expect(text).toContain("It was not re-run");
  });

  it("are left alone when already ended, and the result says that", async () => {
    const group = await crashWhileRunning("sleep 600 & sleep 600");
    process.kill(-group.pgid, "SIGKILL");
    await until(() => members(group.pgid).length === 0, "the group to end");
    server.script(textResponse("noted"));
    const resumed = await runArbor([...runArgs(), "--continue"], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await lastToolResultText()).toContain(`Its process group ${group.pgid} had already ended.`);
  });

  it("a group whose leader's start time differs is another process and is not ended", async () => {
    const child = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
    stray.push(child.pid!);
    expect(orphanStatus({ pgid: child.pid!, processStart: processStartOf(child.pid!) })).toBe("alive");
    expect(orphanStatus({ pgid: child.pid!, processStart: "1" })).toBe("reused");
    expect(orphanStatus({ pgid: child.pid!, processStart: processStartOf(child.pid!), host: "another-host" })).toBe("other-host");
    expect(members(child.pid!)).toEqual([child.pid]);
  });
});

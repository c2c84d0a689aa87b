/**
 * Elicitation as a durable wait, across processes: `arbor run` with server-everything (from
 * `.arbor/mcp.json`, stdio) runs `trigger-elicitation-request`; the server asks for input; the
 * request is in the log. The process that asked is killed with SIGKILL. Another process lists
 * it (`arbor elicitations`) and answers it (`arbor answer`); `arbor resume` re-issues the call,
 * the server asks the same question, gets the recorded answer, and the run ends done with the
 * answer in the tool result the model reads. Real CLI processes, a real SQLite file, the real
 * @ai-sdk/openai client against the loopback server, the real MCP server from npm.
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { EVERYTHING_ENTRY } from "./helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir("arbor-elicit-");
  db = join(dir, "arbor.db");
  mkdirSync(join(dir, ".arbor"), { recursive: true });
  writeFileSync(
    join(dir, ".arbor", "mcp.json"),
    JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, "stdio"], env: { LOG_LEVEL: "warn" }, replay: "safe" } } }, null, 2),
  );
});
afterEach(async () => {
  await server.close();
});

const env = { OPENAI_API_KEY: "test-key" };

/** Every process below `pid` (from /proc): the MCP server a killed arbor leaves behind is ended by the test. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  const walk = (at: number) => {
    for (const child of parents.get(at) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}
const orphans: number[] = [];
afterEach(() => {
  for (const pid of orphans.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});
const modelArgs = () => ["--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir];

describe("MCP elicitation across a kill -9", () => {
  it("is answered by another process after the asker died, and the resumed run completes with the answer", { timeout: 240_000 }, async () => {
    server.script(toolCallResponse([{ id: "call_ask", name: "everything__trigger-elicitation-request", arguments: {} }]), textResponse("thanks, Ada"));
    let child: ChildProcess | undefined;
    let stderr = "";
    const asked = new Promise<{ sessionId: string; elicitationId: string }>((resolve) => {
      const onData = (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        const match = /arbor answer (\S+) (el_\S+) --accept/.exec(stderr);
        if (match) resolve({ sessionId: match[1], elicitationId: match[2] });
      };
      const watch = setInterval(() => {
        if (child?.stderr) {
          child.stderr.on("data", onData);
          clearInterval(watch);
        }
      }, 5);
    });
    const run = runArbor(["--db", db, "run", ...modelArgs(), "ask me for my details"], { env, onSpawn: (spawned) => (child = spawned) });
    const { sessionId, elicitationId } = await asked;
    expect(stderr).toContain('MCP server "everything" asks (tool trigger-elicitation-request): Please provide inputs for the following fields:');
    orphans.push(...descendants(child!.pid!));
    child!.kill("SIGKILL");
    expect((await run).signal).toBe("SIGKILL");

    // Another process sees the wait in the log.
    const listed = await runArbor(["--db", db, "elicitations", sessionId, "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const records = listed.stdout.trim().split("\n").map((line) => JSON.parse(line) as { elicitationId: string; status: string; toolCallId: string; server: string });
    expect(records).toEqual([expect.objectContaining({ elicitationId, status: "pending", toolCallId: "call_ask", server: "everything" })]);

    // An invalid answer is refused, naming the field; nothing is written.
    const invalid = await runArbor(["--db", db, "answer", sessionId, elicitationId, "--accept", '{"name":42}'], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/name: must be string/);

    const answered = await runArbor(["--db", db, "answer", sessionId, elicitationId, "--accept", '{"name":"Ada Lovelace","check":true}'], { env });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toBe(`${elicitationId} accept\n`);
    const again = await runArbor(["--db", db, "answer", sessionId, elicitationId, "--accept", '{"name":"Ada Lovelace","check":true}'], { env });
    expect(again.stdout).toContain("unchanged");
    const conflicting = await runArbor(["--db", db, "answer", sessionId, elicitationId, "--decline"], { env });
    expect(conflicting.code).toBe(1);
    expect(conflicting.stderr).toContain("already answered");

    // The run goes on in a third process: the call is re-issued and the server gets the answer.
    const resumed = await runArbor(["--db", db, "resume", sessionId, ...modelArgs()], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("thanks, Ada");
    expect(server.requests).toHaveLength(2);
    const tools = (server.requests[1].body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
    expect(tools.map((message) => message.tool_call_id)).toEqual(["call_ask"]);
    expect(JSON.stringify(tools[0].content)).toContain("Name: Ada Lovelace");
    expect(JSON.stringify(tools[0].content)).toContain("Agreed to terms: true");

    // One request in the log (the re-issued call's question was the same: no second wait), answered once.
    const all = await runArbor(["--db", db, "elicitations", sessionId, "--all", "--json"], { env });
    const final = all.stdout.trim().split("\n").map((line) => JSON.parse(line) as { status: string; answer?: { action: string; via: string } });
    expect(final).toEqual([expect.objectContaining({ status: "answered", answer: expect.objectContaining({ action: "accept", via: "cli" }) })]);
  });
});

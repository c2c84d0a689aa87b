/**
 * The CLI side of durable tool approval (issue 13): `arbor run --approve bash` without a
 * terminal stops with exit code 3 and prints the waiting call; `arbor approvals` lists it;
 * `arbor approve` / `arbor deny --reason` record the decision (idempotent; unknown, settled
 * and conflicting decisions exit 1); `arbor run --session` then goes on. Real CLI processes,
 * a real SQLite file, real HTTP from @ai-sdk/openai to a loopback OpenAI-wire server.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { repoRoot, runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
  writeFileSync(join(dir, "notes.txt"), "some notes\n");
});
afterEach(async () => {
  await server.close();
});

const env = { OPENAI_API_KEY: "test-key" };
const modelArgs = () => ["--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir];
const arbor = (args: string[]) => runArbor(["--db", db, ...args], { env });

function scriptBashThenText() {
  server.script(
    toolCallResponse([
      { id: "call_bash", name: "bash", arguments: { command: "echo ran >> counter.txt" } },
      { id: "call_read", name: "read", arguments: { path: "notes.txt" } },
    ]),
    textResponse("finished"),
  );
}

function toolMessages(index: number) {
  const body = server.requests[index].body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] };
  return body.messages.filter((message) => message.role === "tool");
}

describe("arbor run --approve, approvals, approve, deny", () => {
  it("stops with exit 3 and the waiting call; approve; run --session runs it once and goes on", async () => {
    scriptBashThenText();
    const first = await arbor(["run", ...modelArgs(), "--approve", "bash", "count it"]);
    expect(first.code, first.stderr).toBe(3);
    const line = first.stdout.trim().split("\n").find((text) => text.includes("call_bash"))!;
    const [sessionId, callId, tool, status, input] = line.split(" ", 5);
    expect({ callId, tool, status, input: JSON.parse(line.slice(line.indexOf("{"))) }).toEqual({
      callId: "call_bash",
      tool: "bash",
      status: "pending",
      input: { command: "echo ran >> counter.txt" },
    });
    expect(input).toBeDefined();
    expect(first.stderr).toContain(`arbor approve ${sessionId}`);
    expect(existsSync(join(dir, "counter.txt"))).toBe(false);
    expect(server.requests).toHaveLength(1);

    const listed = await arbor(["approvals"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim()).toBe(line);
    expect((await arbor(["approvals", sessionId, "--json"])).stdout).toContain('"toolCallId":"call_bash"');

    // A prompt while a call waits is refused; so is continuing before a decision (exit 3 again).
    const early = await arbor(["run", ...modelArgs(), "--session", sessionId]);
    expect(early.code, early.stderr).toBe(3);
    expect(server.requests).toHaveLength(1);

    const unknown = await arbor(["approve", sessionId, "call_nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("call_nope");
    const noReason = await arbor(["deny", sessionId, "call_bash"]);
    expect(noReason.code).toBe(2);

    const approved = await arbor(["approve", sessionId, "call_bash", "--reason", "fine"]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout.trim()).toBe("call_bash approved");
    const again = await arbor(["approve", sessionId, "call_bash"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("unchanged");
    const conflicting = await arbor(["deny", sessionId, "call_bash", "--reason", "no"]);
    expect(conflicting.code).toBe(1);

    const resumed = await arbor(["run", ...modelArgs(), "--session", sessionId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The progress line names the command, though the call was made by the first run's assistant message.
    expect(resumed.stdout).toMatch(/• bash echo ran >> counter\.txt → ok/);
    expect(readFileSync(join(dir, "counter.txt"), "utf8")).toBe("ran\n");
    expect(server.requests).toHaveLength(2);
    expect(toolMessages(1).map((message) => message.tool_call_id).sort()).toEqual(["call_bash", "call_read"]);
    // The sibling (read) needed no approval: it ran in the first process.
    expect(JSON.stringify(toolMessages(1).find((message) => message.tool_call_id === "call_read")!.content)).toContain("some notes");

    expect((await arbor(["approvals"])).stdout.trim()).toBe("No tool call waits for approval.");
    const settled = await arbor(["approve", sessionId, "call_bash"]);
    expect(settled.code).toBe(1);
    expect(settled.stderr).toContain("settled");
  }, 120_000);

  it("--approve all, deny --reason, run --continue: the tool never runs and the model reads the refusal", async () => {
    scriptBashThenText();
    const first = await arbor(["run", ...modelArgs(), "--approve", "all", "count it"]);
    expect(first.code, first.stderr).toBe(3);
    const waiting = first.stdout.trim().split("\n").filter((text) => / call_\w+ \w+ pending \{/.test(text));
    expect(waiting.map((text) => text.split(" ")[1])).toEqual(["call_bash", "call_read"]);
    const sessionId = waiting[0].split(" ")[0];
    expect((await arbor(["deny", sessionId, "call_bash", "--reason", "never touch counter"])).code).toBe(0);
    const partly = await arbor(["approve", "latest", "call_read"]);
    expect(partly.code, partly.stderr).toBe(0);
    const resumed = await arbor(["run", ...modelArgs(), "--continue"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/• bash echo ran >> counter\.txt → error \(denied\)/);
    expect(existsSync(join(dir, "counter.txt"))).toBe(false);
    const denied = toolMessages(1).find((message) => message.tool_call_id === "call_bash")!;
    expect(JSON.stringify(denied.content)).toContain("never touch counter");
    expect(JSON.stringify(denied.content)).toContain("declined");
    expect(JSON.stringify(toolMessages(1).find((message) => message.tool_call_id === "call_read")!.content)).toContain("some notes");
  }, 120_000);

  it("on a terminal, run --approve asks, and y approves: the call runs once and the run goes on (exit 0)", async () => {
    scriptBashThenText();
    // util-linux `script` gives the CLI a pseudo-terminal (sized, so the spinner can draw); the answer is typed into it.
    const command = ["arbor", "--db", db, "run", ...modelArgs(), "--approve", "bash", "count it"];
    const quoted = "stty cols 200 rows 50; " + [process.execPath, "--import", "tsx", "scripts/arbor-dev.ts", ...command.slice(1)].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ");
    const result = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn("/usr/bin/script", ["-q", "-e", "-c", quoted, "/dev/null"], { cwd: repoRoot, env: { ...process.env, ...env, NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
      let output = "";
      let answered = false;
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (!answered && output.includes("approve bash")) {
          answered = true;
          child.stdin.write("y\r");
        }
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, output }));
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('approve bash {"command":"echo ran >> counter.txt"} (call_bash)?');
    expect(readFileSync(join(dir, "counter.txt"), "utf8")).toBe("ran\n");
    expect(server.requests).toHaveLength(2);
  }, 120_000);
});

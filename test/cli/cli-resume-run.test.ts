/**
 * `arbor resume <session>`: an `arbor run` process is killed with SIGKILL while its bash call
 * runs; `arbor resume` (another process) continues the run from the log: the bash call (replay
 * unsafe) gets the interrupted result and its process group is ended, the `read` call of the
 * same batch (replay safe) runs again, the model is called again and the run ends done (exit 0).
 * A second `arbor resume` finds nothing to resume (exit 1). Real CLI processes, a real SQLite
 * file, @ai-sdk/openai against the loopback server.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

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

describe("arbor resume", () => {
  it("continues a run whose arbor run was killed with SIGKILL mid-tool, to done", { timeout: 180_000 }, async () => {
    server.script(
      toolCallResponse([
        { id: "call_bash", name: "bash", arguments: { command: "echo ran >> counter.txt; sleep 600" } },
        { id: "call_read", name: "read", arguments: { path: "notes.txt" } },
      ]),
      textResponse("finished"),
    );
    let child: ChildProcess | undefined;
    const run = runArbor(["--db", db, "run", ...modelArgs(), "count once"], { env, onSpawn: (spawned) => (child = spawned) });
    while (!existsSync(join(dir, "counter.txt"))) await new Promise((resolve) => setTimeout(resolve, 20));
    child!.kill("SIGKILL");
    expect((await run).signal).toBe("SIGKILL");

    const resumed = await runArbor(["--db", db, "resume", "latest", ...modelArgs()], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(join(dir, "counter.txt"), "utf8")).toBe("ran\n");
    expect(server.requests).toHaveLength(2);
    const tools = (server.requests[1].body as { messages: { role: string; tool_call_id?: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
    expect(tools.map((message) => message.tool_call_id)).toEqual(["call_bash", "call_read"]);
    expect(JSON.stringify(tools[0].content)).toContain("was interrupted");
    expect(JSON.stringify(tools[1].content)).toContain("some notes");

    const events = await runArbor(["--db", db, "events", "latest", "--json"], { env });
    const types = events.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.filter((type) => type === "run.started")).toHaveLength(1);
    expect(types.filter((type) => type === "run.resumed")).toHaveLength(1);
    expect(types.filter((type) => type === "run.ended")).toHaveLength(1);

    const again = await runArbor(["--db", db, "resume", "latest", ...modelArgs()], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no unfinished run");
  });
});

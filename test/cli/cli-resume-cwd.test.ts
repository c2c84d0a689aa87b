/**
 * A resumed session works in the folder it was started in (issue 12 item 1): `run --continue`,
 * `run --session` and `chat --continue` use the session's recorded cwd unless `--cwd` overrides
 * it, and refuse (exit 2) when that folder is gone. Real CLI processes, a real SQLite file and
 * the loopback OpenAI-wire server; the CLI runs from a different folder than the session's.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let project: string;
let elsewhere: string;
let db: string;
const env = { OPENAI_API_KEY: "test-key" };

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  project = join(dir, "project");
  elsewhere = join(dir, "elsewhere");
  mkdirSync(project);
  mkdirSync(elsewhere);
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
});

const model = () => ["--base-url", server.url, "--model", "openai:gpt-test"];
const writeFile = (name: string) => toolCallResponse([{ id: `call_${name}`, name: "write", arguments: { path: name, content: `${name}\n` } }]);

async function startSession(): Promise<string> {
  server.script(writeFile("first.txt"), textResponse("wrote it"));
  const result = await runArbor(["--db", db, "run", ...model(), "--cwd", project, "write first.txt"], { cwd: elsewhere, env });
  expect(result.code, result.stderr).toBe(0);
  expect(existsSync(join(project, "first.txt"))).toBe(true);
  return /session (\S+)/.exec(result.stderr)![1];
}

describe("resuming a session uses its recorded folder", { timeout: 120_000 }, () => {
  it("run --continue and run --session write into the session's folder, not the current one", async () => {
    const sessionId = await startSession();
    server.script(writeFile("second.txt"), textResponse("again"));
    const resumed = await runArbor(["--db", db, "run", ...model(), "--continue", "write second.txt"], { cwd: elsewhere, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(join(project, "second.txt"), "utf8")).toBe("second.txt\n");
    expect(existsSync(join(elsewhere, "second.txt"))).toBe(false);

    server.script(writeFile("third.txt"), textResponse("and again"));
    const bySession = await runArbor(["--db", db, "run", ...model(), "--session", sessionId, "write third.txt"], { cwd: elsewhere, env });
    expect(bySession.code, bySession.stderr).toBe(0);
    expect(existsSync(join(project, "third.txt"))).toBe(true);
    expect(existsSync(join(elsewhere, "third.txt"))).toBe(false);
  });

  it("--cwd overrides the recorded folder", async () => {
    await startSession();
    const other = join(dir, "other");
    mkdirSync(other);
    server.script(writeFile("moved.txt"), textResponse("moved"));
    const result = await runArbor(["--db", db, "run", ...model(), "--continue", "--cwd", other, "write moved.txt"], { cwd: elsewhere, env });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(other, "moved.txt"))).toBe(true);
    expect(existsSync(join(project, "moved.txt"))).toBe(false);
  });

  it("chat --continue works in the session's folder", async () => {
    await startSession();
    server.script(writeFile("chat.txt"), textResponse("chatted"));
    const result = await runArbor(["--db", db, "chat", ...model(), "--continue"], { cwd: elsewhere, env, input: "write chat.txt\n" });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(project, "chat.txt"))).toBe(true);
    expect(existsSync(join(elsewhere, "chat.txt"))).toBe(false);
  });

  it("refuses with exit 2, naming the folder, when the recorded folder is gone", async () => {
    const sessionId = await startSession();
    rmSync(project, { recursive: true });
    const requestsBefore = server.requests.length;
    for (const args of [["run", ...model(), "--continue", "go on"], ["run", ...model(), "--session", sessionId, "go on"], ["chat", ...model(), "--continue"]]) {
      const result = await runArbor(["--db", db, ...args], { cwd: elsewhere, env, input: "hello\n" });
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(project);
      expect(result.stderr).toMatch(/no longer exists.*--cwd/);
    }
    expect(server.requests.length).toBe(requestsBefore);
    expect(existsSync(join(elsewhere, "go on"))).toBe(false);
  });
});

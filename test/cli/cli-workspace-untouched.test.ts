/**
 * A restore never destroys work the log has not seen (docs/workspace.md): `checkout --files` leaves a path ignored on disk now, a path ignored by the
 * restored entry's own `.gitignore`, and a file too large to record (and the folder holding one) as they are, and says so; `arbor resume --cwd` refuses
 * a non-empty folder that is not the session's and whose files the continuation would overwrite or delete. Real CLI processes, a real SQLite file,
 * real folders, the loopback OpenAI-wire server.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;
let work: string;
const env = { OPENAI_API_KEY: "test-key" };

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
  work = join(dir, "work");
  mkdirSync(work);
});
afterEach(async () => {
  await server.close();
});

const model = () => ["--base-url", server.url, "--model", "openai:gpt-test"];
const write = (path: string, content: string) => toolCallResponse([{ id: `call_w_${path}`, name: "write", arguments: { path, content } }]);
const bash = (command: string) => toolCallResponse([{ id: `call_b_${command.length}`, name: "bash", arguments: { command } }]);

/** The ids of the session's tool result entries, in order. */
async function toolResults(): Promise<string[]> {
  const log = createSqliteEventLog({ path: db, readOnly: true });
  try {
    const sessions = await runArbor(["--db", db, "sessions", "--json"]);
    const id = (JSON.parse(sessions.stdout) as { id: string }[])[0].id;
    const events = await log.readStream(`session-${id}`);
    return events
      .filter((event) => event.type === "entry.appended")
      .map((event) => (event.data as { entry: { id: string; message?: { role: string } } }).entry)
      .filter((entry) => entry.message?.role === "toolResult")
      .map((entry) => entry.id);
  } finally {
    await log.close();
  }
}

async function run(prompt: string, ...responses: ReturnType<typeof textResponse>[]): Promise<void> {
  server.script(...responses, textResponse("done"));
  const first = !existsSync(db);
  const result = await runArbor(["--db", db, "run", ...model(), ...(first ? ["--checkpoints", "--cwd", work] : ["--session", "latest"]), prompt], { env });
  expect(result.code, result.stderr).toBe(0);
}

async function checkout(entry: string): Promise<string> {
  const result = await runArbor(["--db", db, "checkout", "latest", entry, "--files"], { env });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

describe("a restore leaves what the log has not seen", { timeout: 300_000 }, () => {
  it("a recorded file the user then ignores and fills is neither overwritten nor deleted, going back or forth", async () => {
    await run("write .env", write(".env", "TOKEN=placeholder\n"));
    await run("write notes", write("notes.txt", "hello\n"));
    const [first, second] = await toolResults();
    writeFileSync(join(work, ".gitignore"), ".env\n");
    writeFileSync(join(work, ".env"), "TOKEN=real-user-secret\n");

    const back = await checkout(first);
    expect(readFileSync(join(work, ".env"), "utf8")).toBe("TOKEN=real-user-secret\n");
    expect(back).toContain(".env (ignored by .gitignore now)");
    expect(existsSync(join(work, "notes.txt"))).toBe(false);
    const savedAt = /at entry (\S+) \(/.exec(back)![1];
    await checkout(savedAt);
    expect(readFileSync(join(work, ".env"), "utf8")).toBe("TOKEN=real-user-secret\n");
    expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("hello\n");
    await checkout(second);
    expect(readFileSync(join(work, ".env"), "utf8")).toBe("TOKEN=real-user-secret\n");
  });

  it("a file tracked now but ignored by the restored entry's .gitignore stays", async () => {
    await run("ignore the log", write(".gitignore", "build.log\n"));
    await run("track the log", bash("rm .gitignore; echo line > build.log"));
    const [first] = await toolResults();
    const back = await checkout(first);
    expect(readFileSync(join(work, ".gitignore"), "utf8")).toBe("build.log\n");
    expect(readFileSync(join(work, "build.log"), "utf8")).toBe("line\n");
    expect(back).toContain("build.log (ignored at that entry)");
  });

  it("a file grown too large to record, and the folder holding one, stay as they are", async () => {
    await run("small data", write("data.bin", "small"));
    await run("big data", bash("head -c 2000000 /dev/zero > data.bin; mkdir big; echo a > big/small.txt; head -c 2000000 /dev/zero > big/blob.bin"));
    const [first] = await toolResults();
    const back = await checkout(first);
    expect(statSync(join(work, "data.bin")).size).toBe(2_000_000);
    expect(statSync(join(work, "big/blob.bin")).size).toBe(2_000_000);
    expect(existsSync(join(work, "big/small.txt"))).toBe(false);
    expect(back).toContain("data.bin (too large to record)");
    expect(back).toContain("big (a folder still holding files left alone)");
  });
});

describe("arbor resume --cwd", { timeout: 300_000 }, () => {
  it("refuses a non-empty folder that is not the session's, and writes the recorded files into an empty one", async () => {
    server.script(write("a.txt", "v1\n"), bash("echo ran > started.txt; sleep 600"), textResponse("finished"));
    let child: ChildProcess | undefined;
    const running = runArbor(["--db", db, "run", ...model(), "--checkpoints", "--cwd", work, "go"], { env, onSpawn: (spawned) => (child = spawned) });
    while (!existsSync(join(work, "started.txt"))) await new Promise((resolve) => setTimeout(resolve, 20));
    child!.kill("SIGKILL");
    expect((await running).signal).toBe("SIGKILL");
    const requests = server.requests.length;

    const other = join(dir, "other");
    mkdirSync(join(other, "src"), { recursive: true });
    writeFileSync(join(other, "important.txt"), "precious\n");
    writeFileSync(join(other, "src/main.c"), "code\n");
    const refused = await runArbor(["--db", db, "resume", "latest", ...model(), "--cwd", other], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(other);
    expect(refused.stderr).toContain("important.txt");
    expect(readFileSync(join(other, "important.txt"), "utf8")).toBe("precious\n");
    expect(readFileSync(join(other, "src/main.c"), "utf8")).toBe("code\n");
    expect(server.requests.length).toBe(requests);

    const empty = join(dir, "empty");
    mkdirSync(empty);
    const resumed = await runArbor(["--db", db, "resume", "latest", ...model(), "--cwd", empty], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(join(empty, "a.txt"), "utf8")).toBe("v1\n");
  });
});

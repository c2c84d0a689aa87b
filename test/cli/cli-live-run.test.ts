/**
 * Issue 19 finding 6: every command that writes a session refuses while a run of it is live in
 * ANOTHER real process, and that run goes on undisturbed. Real `arbor` processes, a real SQLite
 * file, a loopback OpenAI server whose stream hangs (so the run stays live until it is stopped).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { hangResponse, startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir("arbor-live-");
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
});

const env = { OPENAI_API_KEY: "test-key" };
const modelFlags = () => ["--base-url", server.url, "--model", "openai:gpt-test"];

async function readEvents() {
  const log = createSqliteEventLog({ path: db });
  try {
    return await log.readAll();
  } finally {
    await log.close();
  }
}

/** Waits (bounded by count; no timing is asserted) until the log holds a matching event. */
async function waitForEvent(after: number, predicate: (type: string, data: any) => boolean): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (existsSync(db) && (await readEvents().catch(() => [])).slice(after).some((event) => predicate(event.type, event.data))) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the expected event never appeared in the log");
}

describe("maintenance commands against a live run in another process", { timeout: 180_000 }, () => {
  it("compact, label, checkout, rm and run are refused, and the live run is not disturbed", async () => {
    server.script(textResponse("first reply"), textResponse("second reply"));
    for (const prompt of ["first", "second"]) {
      const turn = await runArbor(["--db", db, "run", ...modelFlags(), "--cwd", dir, ...(prompt === "second" ? ["--continue"] : []), prompt], { env });
      expect(turn.code, turn.stderr).toBe(0);
    }
    const sessionId = (JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string }[])[0].id;
    const firstEntry = ((await readEvents()).find((event) => event.type === "entry.appended")!.data as { entry: { id: string } }).entry.id;
    const before = (await readEvents()).length;

    // The live run: its stream sends part of an answer, then nothing.
    server.script(hangResponse("Partial answ"));
    let live: import("node:child_process").ChildProcess | undefined;
    const running = runArbor(["--db", db, "run", ...modelFlags(), "--cwd", dir, "--session", sessionId, "third"], { env, onSpawn: (child) => (live = child) });
    await waitForEvent(before, (type, data) => type === "message.delta" && data.kind === "text");
    const requestsBefore = server.requests.length;

    const attempts: [string, string[]][] = [
      ["compact", ["compact", sessionId, ...modelFlags()]],
      ["label", ["label", sessionId, firstEntry, "mine"]],
      ["checkout", ["checkout", sessionId, firstEntry]],
      ["checkout --summarize", ["checkout", sessionId, firstEntry, "--summarize", ...modelFlags()]],
      ["rm", ["rm", sessionId]],
      ["run --session", ["run", ...modelFlags(), "--cwd", dir, "--session", sessionId, "meanwhile"]],
    ];
    for (const [name, args] of attempts) {
      const result = await runArbor(["--db", db, ...args], { env });
      expect(result.code, `${name}: ${result.stderr}`).not.toBe(0);
      expect(result.stderr, name).toMatch(new RegExp(`run in progress in process ${live!.pid}`));
    }
    // Nothing reached the model and nothing was written by the refused commands.
    expect(server.requests.length).toBe(requestsBefore);
    const during = await readEvents();
    const foreign = during.slice(before).filter((event) => (event.metadata as { owner?: { pid: number } }).owner && (event.metadata as { owner: { pid: number } }).owner.pid !== live!.pid);
    expect(foreign).toEqual([]);
    expect(during.some((event) => event.type === "entry.appended" && ["label", "compaction"].includes((event.data as { entry: { type: string } }).entry.type))).toBe(false);

    // The live run is intact: stopping it ends it cleanly (aborted, exit 143), not on a conflict.
    live!.kill("SIGTERM");
    const stopped = await running;
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stderr).not.toMatch(/conflict|EXPECTED_VERSION/i);
    const ended = (await readEvents()).filter((event) => event.type === "run.ended").at(-1)!;
    expect((ended.data as { status: string }).status).toBe("aborted");
    // Once it is over, the same commands work again.
    const label = await runArbor(["--db", db, "label", sessionId, firstEntry, "mine"]);
    expect(label.code, label.stderr).toBe(0);
  });
});

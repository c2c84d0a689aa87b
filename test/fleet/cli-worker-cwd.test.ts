/**
 * `arbor worker` runs a queued prompt (`harness.start`) in the folder its session recorded, not in the worker's own: the demo's file lands in the
 * session's folder. A session whose folder is gone ends its task `failed`, naming the folder, with no model call and nothing written elsewhere.
 * The worker records the endpoint it ran the session against, as `arbor run` does. A real `arbor worker` child process started from another
 * folder, a real SQLite file and the loopback OpenAI-wire server.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/openai-server.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { ended, useClosers, workerArbor } from "./fixtures/cli-worker.ts";

const closers = useClosers();

describe("arbor worker works in each session's recorded folder", () => {
  it("writes a queued prompt's file into the session's folder; a session whose folder is gone fails its task naming it", async () => {
    const server = await startOpenAIServer();
    closers.push(() => server.close());
    const dir = tempDir("arbor-worker-cwd-");
    const fleet = join(dir, "fleet");
    const gone = join(dir, "gone");
    const workerDir = join(dir, "worker");
    for (const folder of [fleet, gone, workerDir]) mkdirSync(folder);
    const db = join(dir, "arbor.db");
    const log = createSqliteEventLog({ path: db });
    closers.push(() => log.close());
    const harness = await createHarness({ eventLog: log, cwd: dir, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } });
    closers.push(() => harness.close());
    const session = await harness.createSession({ cwd: fleet });
    const orphan = await harness.createSession({ cwd: gone });
    rmSync(gone, { recursive: true });

    const worker = workerArbor(["--db", db, "--cwd", workerDir, "--model", "openai:gpt-test", "--base-url", server.url], { OPENAI_API_KEY: "sk-test" });
    closers.push(async () => {
      worker.child().kill("SIGKILL");
      await worker.exited;
    });
    await worker.ready;

    server.script(toolCallResponse([{ id: "call_demo", name: "write", arguments: { path: "demo.txt", content: "demo\n" } }]), textResponse("wrote demo.txt"));
    const first = await harness.start(session.id, "write demo.txt");
    expect((await ended(log, first.taskId)).ended).toMatchObject({ status: "done" });
    expect(readFileSync(join(fleet, "demo.txt"), "utf8")).toBe("demo\n");
    expect(existsSync(join(workerDir, "demo.txt"))).toBe(false);
    // The endpoint the worker ran it against, as `arbor run` records it.
    const entries = (await log.readStream(sessionStreamId(session.id))).filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { type: string; customType?: string; data?: unknown } }).entry);
    expect(entries.find((entry) => entry.customType === "arbor.endpoint")?.data).toMatchObject({ model: "openai:gpt-test", baseURL: server.url });

    const second = await harness.start(orphan.id, "write demo.txt");
    const failed = (await ended(log, second.taskId)).ended!;
    expect(failed).toMatchObject({ status: "failed", code: "SESSION_FOLDER_MISSING" });
    expect(failed.error).toContain(gone);
    expect(server.requests).toHaveLength(2);
    expect(readdirSync(workerDir)).toEqual([]);
    expect(existsSync(gone)).toBe(false);

    worker.child().kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);
  }, 120_000);
});

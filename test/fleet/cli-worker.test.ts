/**
 * `arbor worker` and `arbor serve` (which runs a worker too) run background prompts queued by
 * another process (`harness.start`) with no request, on the CLI's log; SIGTERM lets the worker
 * stop cleanly (exit 0).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse } from "../../src/testing/openai-server.ts";
import { runArbor, serveArbor, tempDir } from "../cli/cli-helpers.ts";
import { ended, useClosers, workerArbor } from "./fixtures/cli-worker.ts";

const closers = useClosers();

describe("arbor worker and arbor serve run the fleet's tasks", () => {
  it("a background prompt queued by another process runs in `arbor worker`, then in `arbor serve`; SIGTERM stops the worker cleanly", async () => {
    const server = await startOpenAIServer({ respond: () => textResponse("background answer") });
    closers.push(() => server.close());
    const dir = tempDir("arbor-cli-worker-");
    const db = join(dir, "arbor.db");
    const log = createSqliteEventLog({ path: db });
    closers.push(() => log.close());
    const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } });
    closers.push(() => harness.close());
    const session = await harness.createSession({ cwd: dir });
    const env = { OPENAI_API_KEY: "sk-test" };
    const flags = ["--db", db, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", server.url];

    const worker = workerArbor([...flags, "--concurrency", "2"], env);
    closers.push(async () => {
      worker.child().kill("SIGKILL");
      await worker.exited;
    });
    expect(await worker.ready).toMatch(/arbor worker: \S+ \(model openai:gpt-test; 2 at once; log /);
    const first = await harness.start(session.id, "first background prompt");
    const firstState = await ended(log, first.taskId);
    expect(firstState.ended).toMatchObject({ status: "done", attempt: 1 });
    expect((firstState.claim!.owner as { pid: number }).pid).toBe(worker.child().pid);
    worker.child().kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);

    const serve = serveArbor([...flags, "--port", "0"], env);
    closers.push(async () => {
      serve.child().kill("SIGKILL");
      await serve.exited;
    });
    expect(await serve.ready).toMatch(/^http:/);
    const second = await harness.start(session.id, "second background prompt");
    const secondState = await ended(log, second.taskId);
    expect(secondState.ended).toMatchObject({ status: "done", attempt: 1 });
    expect((secondState.claim!.owner as { pid: number }).pid).toBe(serve.child().pid);
    serve.child().kill("SIGTERM");
    expect((await serve.exited).code).toBe(0);

    const events = await log.readStream(sessionStreamId(session.id));
    expect(events.filter((event) => event.type === "run.started")).toHaveLength(2);
    expect(events.filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status)).toEqual(["done", "done"]);
  }, 120_000);

  it("refuses a bad --concurrency before opening anything", async () => {
    const result = await runArbor(["worker", "--model", "openai:gpt-test", "--concurrency", "0"], { env: { OPENAI_API_KEY: "sk-test" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Bad --concurrency "0"');
  }, 60_000);
});

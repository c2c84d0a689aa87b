/**
 * One writer per session across processes on PostgreSQL, at the agent level: a
 * worker process runs a session (its model call hangs); this process's run on the
 * same session is refused with SessionBusyError; after the worker is SIGKILLed this
 * process takes the session over, recovery closes the interrupted run, and its run
 * completes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isEventOfType } from "../../src/store/events/catalogue.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { SessionBusyError } from "../../src/core/errors.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { spawnTsx } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { startStepServer } from "./pg-scripted-server.ts";

const newSchema = useTestSchemas("runown");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const isInterrupted = (event: { type: string; data: unknown }) => isEventOfType(event, "run.ended") && event.data.status === "interrupted";

describe("PostgreSQL: one writer per session across processes", () => {
  it("refuses a second process's run, then takes over after the owner is SIGKILLed and recovers its run", async () => {
    const schema = newSchema();
    const server = await startStepServer();
    closers.push(() => server.close());
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 });
    closers.push(() => log.close());
    const repository = createSessionRepository({ log });
    const created = await repository.create({ cwd: "/tmp" });

    const worker = spawnTsx("test/machines/fixtures/pg-worker.ts", [PG_URL, schema, server.url]);
    closers.push(async () => {
      worker.process.kill("SIGKILL");
      await worker.exited;
    });
    expect(await worker.nextLine()).toBe('"ready"');
    worker.process.stdin.write(`${JSON.stringify({ cmd: "prompt", session: created.id })}\n`);
    await server.waitForRequests(1); // the worker owns the session and its model call hangs

    const session = await repository.open(created.id);
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const agent = createAgent({ session, model, retry: { maxRetries: 0 } });
    const refused = await agent.prompt(`session ${created.id}: mine`).catch((error: unknown) => error);
    expect(SessionBusyError.isInstance(refused)).toBe(true);

    worker.process.kill("SIGKILL");
    expect((await worker.exited).signal).toBe("SIGKILL");
    let outcome;
    for (let attempt = 0; ; attempt++) {
      try {
        outcome = await agent.prompt(`session ${created.id}: mine`);
        break;
      } catch (error) {
        // The server ends the dead worker's backend (and its lock) asynchronously.
        if (!SessionBusyError.isInstance(error) || attempt > 400) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await agent.waitForIdle();
    expect(outcome.status).toBe("done");

    const events = await log.readStream(`session-${created.id}`);
    expect(events.map((event) => event.version)).toEqual(events.map((_, index) => index + 1));
    const runStarts = events.filter((event) => event.type === "run.started");
    expect(runStarts).toHaveLength(2);
    const interrupted = events.findIndex(isInterrupted);
    expect(interrupted).toBeGreaterThan(events.indexOf(runStarts[0]));
    expect(interrupted).toBeLessThan(events.indexOf(runStarts[1]));
    const owners = await log.readAll({ types: ["run.started"] });
    expect(owners.map((event) => (event.metadata.owner as { pid: number }).pid)).toEqual([worker.process.pid, process.pid]);
  }, 60_000);
});

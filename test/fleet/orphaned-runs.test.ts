/**
 * A run whose process died is continued with no request: a process prompts a session directly
 * (as an HTTP service does, no task queued) and is killed with SIGKILL mid-stream; a worker
 * process started afterwards (`createWorker`, durability `continue`) finds the open run whose
 * owner is gone and continues it to `done`, though nobody asks for that session again. Before
 * workers continued runs, such a run looked "running" forever until a person came back.
 * On one PostgreSQL schema and on one SQLite file.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AssistantMessage } from "../../src/core/messages.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { hangResponse, startOpenAIServer, textResponse } from "../../src/testing/openai-server.ts";
import { spawnTsx } from "../store/child-process.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { openChaosEffects } from "./fixtures/chaos-effects.ts";

const newSchema = useTestSchemas("orphan");
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Backend = "sqlite" | "pg";

function open(backend: Backend): { log: EventLog; where: string; worker: object } {
  const dir = mkdtempSync(join(tmpdir(), "arbor-orphan-"));
  if (backend === "pg") {
    const schema = newSchema();
    return { log: createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 2 }), where: schema, worker: { db: PG_URL, schema } };
  }
  const path = join(dir, "arbor.db");
  return { log: createSqliteEventLog({ path }), where: path, worker: { db: path, effects: join(dir, "effects.db") } };
}

/** The worker's effects tables (its tools are not called here, but it opens them). */
async function createEffects(worker: object): Promise<void> {
  const where = worker as { db: string; schema?: string; effects?: string };
  const effects = await openChaosEffects(where.schema ? { pg: where.db, schema: where.schema } : { sqlite: where.effects! }, true);
  await effects.close();
}

describe.each<Backend>(["pg", "sqlite"])("a run whose process died (%s)", (backend) => {
  it("is continued to done by a worker, with no request for its session", async () => {
    const server = await startOpenAIServer();
    closers.push(() => server.close());
    server.script(hangResponse("The answer starts"), textResponse("The answer, continued by the worker."));
    const { log, where, worker } = open(backend);
    closers.push(() => log.close());
    const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });

    // The owner prompts the session itself and dies mid-stream.
    const effects = join(mkdtempSync(join(tmpdir(), "arbor-orphan-effects-")), "effects.db");
    const owner = spawnTsx("test/machines/fixtures/continuation-child.ts", [backend, where, session.id, server.url, effects, "owner", "stream"]);
    closers.push(async () => {
      owner.process.kill("SIGKILL");
      await owner.exited;
    });
    expect(await owner.nextLine()).toBe("KILL_ME");
    owner.process.kill("SIGKILL");
    expect((await owner.exited).signal).toBe("SIGKILL");
    const before = await log.readStream(sessionStreamId(session.id));
    expect(before.filter((event) => event.type === "run.started")).toHaveLength(1);
    expect(before.some((event) => event.type === "run.ended")).toBe(false);

    // A worker starts; nobody asks for the session.
    await createEffects(worker);
    const fleetWorker = spawnTsx("test/fleet/fixtures/chaos-worker.ts", [JSON.stringify({ ...worker, baseURL: server.url })]);
    closers.push(async () => {
      fleetWorker.process.kill("SIGKILL");
      await fleetWorker.exited;
    });
    expect(await fleetWorker.nextLine()).toBe("ready");

    let events: StoredEvent[] = [];
    const deadline = Date.now() + 60_000;
    while (!events.some((event) => event.type === "run.ended")) {
      if (Date.now() > deadline) throw new Error(`the run was not continued: ${events.map((event) => event.type).slice(-5).join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = await log.readStream(sessionStreamId(session.id));
    }
    const runId = (before.find((event) => event.type === "run.started")!.data as { runId: string }).runId;
    expect(events.filter((event) => event.type === "run.started")).toHaveLength(1);
    expect(events.filter((event) => event.type === "run.ended").map((event) => event.data)).toEqual([expect.objectContaining({ runId, status: "done" })]);
    const resumed = events.filter((event) => event.type === "run.resumed");
    expect(resumed).toHaveLength(1);
    expect(resumed[0].data).toMatchObject({ runId, previousOwner: { pid: owner.process.pid } });
    expect((resumed[0].metadata.owner as { pid: number }).pid).toBe(fleetWorker.process.pid);
    // The model was asked once by the owner and once by the worker; the answer is the worker's.
    expect(server.requests).toHaveLength(2);
    const messages = (await createSessionRepository({ log }).open(session.id)).view.buildContext().messages;
    const last = messages.at(-1) as AssistantMessage;
    expect(last.content).toEqual([expect.objectContaining({ type: "text", text: "The answer, continued by the worker." })]);
  }, 120_000);
});

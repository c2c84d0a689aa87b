/**
 * A steering message queued during a run whose process is killed (kill -9) belongs to that run. When the session is opened again with the default
 * durability (`interrupt`), recovery closes the run `interrupted` and its steering queue is cleared (`queue.changed` "cleared" in the log): the next
 * prompt's run must not receive the stale message after its own prompt. With `durability: "continue"` the continued run takes it (tested in the
 * continuation tests).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { hangResponse, startOpenAIServer, textResponse } from "../../src/testing/openai-server.ts";
import { spawnTsx } from "../store/child-process.ts";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("steering queued by a run that was killed", () => {
  it("is cleared when recovery closes the run interrupted, so the next prompt's run never receives it", { timeout: 60_000 }, async () => {
    const path = join(mkdtempSync(join(tmpdir(), "arbor-stale-steer-")), "log.db");
    const server = await startOpenAIServer();
    closers.push(() => server.close());
    server.script(hangResponse("half"));
    const setup = createSqliteEventLog({ path });
    const sessionId = (await createSessionRepository({ log: setup }).create({ cwd: "/tmp" })).id;
    await setup.close();

    const child = spawnTsx("test/machines/fixtures/steer-child.ts", [path, sessionId, server.url]);
    closers.push(async () => {
      child.process.kill("SIGKILL");
      await child.exited;
    });
    expect(await child.nextLine()).toBe("STEERED");
    // Killed only once its model request hangs on the server (that request takes the one hanging response).
    await server.waitForRequests(1);
    child.process.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    const eventLog = createSqliteEventLog({ path });
    closers.push(() => eventLog.close());
    server.script(textResponse("answer to the next prompt"), textResponse("answer to the stale steer"));
    const harness = await createHarness({ eventLog, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) }, sessionId });
    closers.push(() => harness.close());
    const outcome = await harness.prompt("NEXT PROMPT");
    expect(outcome.status).toBe("done");

    const sent = server.requests.slice(1).map((request) => JSON.stringify(request.body?.messages ?? []));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain("NEXT PROMPT");
    expect(sent[0]).not.toContain("STALE STEER");
    const events = await eventLog.readStream(sessionStreamId(sessionId));
    const interrupted = events.findIndex((event) => event.type === "run.ended" && (event.data as { status: string }).status === "interrupted");
    const cleared = events.findIndex((event) => event.type === "queue.changed" && (event.data as { action: string; queue: string }).action === "cleared");
    expect(interrupted).toBeGreaterThan(0);
    expect(cleared).toBeGreaterThan(interrupted);
  });
});

/**
 * A service on a SQLite file shared with other processes of the host (`docs/http.md`, "Several replicas"): a session the service holds open,
 * written to by another process since (`arbor label` as a child process, or another connection's run), still takes the next chat prompt: the
 * run catches up with the log once its lease is taken, runs and is recorded. A prompt whose run is refused before it is in the log (another
 * writer appended first) answers an `error` chunk naming it, never a stream that waits forever. Real SQLite file, a real CLI child process,
 * loopback model.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { awaitRunStart } from "../../src/http/run-start.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import { Observable } from "rxjs";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { startOpenAIServer, textResponse } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";

describe("a session another process wrote to since the service opened it", () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("takes the next prompt: the run catches up with the log, runs, and is recorded", async () => {
    const dir = tempDir("arbor-stale-pool-");
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const db = join(dir, "arbor.db");
    const model = await startOpenAIServer({ respond: (request) => textResponse(`reply to ${JSON.stringify(request.body).includes("second") ? "second" : "first"}`) });
    cleanups.push(() => model.close());
    const harness = await createHarness({ eventLogPath: db, cwd: dir, models: { main: { model: createOpenAIModel({ modelId: "m", baseURL: model.url, apiKey: "x", api: "chat" }) } } });
    cleanups.push(() => harness.close());
    const server = await startChatServer({ handler: createChatHandler({ harness, cwd: dir }) });
    cleanups.push(() => server.close());
    const post = async (text: string) => {
      const response = await fetch(`${server.url}/api/chat`, {
        method: "POST",
        signal: AbortSignal.timeout(20_000),
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "q1", trigger: "submit-message", messages: [{ id: `u-${text}`, role: "user", parts: [{ type: "text", text }] }] }),
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    expect(await post("first")).toContain("reply to first");
    // Another process labels the session's leaf: the service's open handle is now behind the log.
    const reader = createSqliteEventLog({ path: db, readOnly: true });
    const leaf = (await createSessionRepository({ log: reader }).open("q1")).view.leafId!;
    await reader.close();
    const labelled = await runArbor(["--db", db, "label", "q1", leaf, "checked"], { cwd: dir });
    expect(labelled.code).toBe(0);

    const second = await post("second");
    expect(second).toContain("reply to second");
    expect(second).not.toContain('"type":"error"');
    const log = createSqliteEventLog({ path: db, readOnly: true });
    cleanups.push(() => log.close());
    const entries = (await log.readStream("session-q1")).filter((event) => event.type === "entry.appended").map((event) => (event.data as { entry: { type: string; label?: string; message?: { content: unknown } } }).entry);
    expect(entries.some((entry) => entry.type === "label" && entry.label === "checked")).toBe(true);
    expect(JSON.stringify(entries.filter((entry) => entry.type === "message").map((entry) => entry.message?.content))).toMatch(/first.*reply to first.*second.*reply to second/);
  }, 60_000);

  it("a run that ends without ever being in the log is refused with its error, not a stream that never ends", async () => {
    const chunks = new Observable<string>(() => undefined);
    const outcome = Promise.resolve({ runId: "r1", status: "failed", error: "refused write" });
    const start = await awaitRunStart(chunks, outcome, async () => new Error("refused write; the prompt was not recorded"));
    expect(start).toEqual({ kind: "refused", error: new Error("refused write; the prompt was not recorded") });
    // A run that is in the log starts (its chunks will come).
    expect((await awaitRunStart(chunks, outcome, async () => undefined)).kind).toBe("started");
  });
});

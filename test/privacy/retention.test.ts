/**
 * Retention of streamed deltas on SQLite: with `retention.endedMessageDeltas: "drop"`, a real
 * run's `message.delta` events lose their text once the message ended and was kept (the entry
 * has the full text), the saving is reported, versions stay contiguous, and the text is gone
 * from the file's bytes except inside the entry.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { errorResponse, startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { tempDir } from "../cli/cli-helpers.ts";

const occurrences = (path: string, text: string) =>
  ["", "-wal"].filter((suffix) => existsSync(path + suffix)).reduce((count, suffix) => count + readFileSync(path + suffix).toString("latin1").split(text).length - 1, 0);

describe("retention of ended messages' deltas", { timeout: 60_000 }, () => {
  let server: OpenAIServer;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("arbor-retention-");
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(name: string, retention?: "drop") {
    const path = join(dir, `${name}.db`);
    const saved: { messageId: string; events: number; bytes: number }[] = [];
    const log = createSqliteEventLog({ path, ...(retention ? { retention: { endedMessageDeltas: retention, onDropped: (entry) => saved.push(entry) } } : {}) });
    const reply = "DELTA-TEXT-" + "abcdefgh ".repeat(200);
    server.script(errorResponse(503), textResponse(reply));
    const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) }, cwd: dir, retry: { baseDelayMs: 1 } });
    const outcome = await harness.prompt("write a long reply");
    await harness.close();
    const events = await log.readStream(`session-${harness.id}`);
    await log.close();
    return { path, saved, outcome, events, reply };
  }

  it("empties the deltas of the kept message, keeps the entry's full text, and reports the bytes saved", async () => {
    const kept = await run("keep");
    const dropped = await run("drop", "drop");
    expect(dropped.outcome.status).toBe("done");
    const deltas = (events: typeof kept.events) => events.filter((event) => event.type === "message.delta").map((event) => (event.data as { delta: string }).delta);
    const keptText = deltas(kept.events).join("");
    expect(keptText.length).toBeGreaterThanOrEqual(kept.reply.length);
    expect(deltas(dropped.events).every((delta) => delta === "")).toBe(true);
    expect(deltas(dropped.events)).toHaveLength(deltas(kept.events).length);
    // The measure: one pass for the kept assistant message, its bytes = the text its deltas held.
    expect(dropped.saved).toHaveLength(1);
    expect(dropped.saved[0].bytes).toBe(Buffer.byteLength(dropped.reply));
    expect(dropped.saved[0].events).toBe(deltas(dropped.events).length);
    // The entry keeps the full text; versions stay contiguous.
    const entry = dropped.events.find((event) => event.type === "entry.appended" && JSON.stringify(event.data).includes("DELTA-TEXT-"));
    expect(entry).toBeDefined();
    expect(dropped.events.map((event) => event.version)).toEqual(dropped.events.map((_, index) => index + 1));
    // In the file: the text lives once (the entry), not once more in the deltas.
    expect(occurrences(kept.path, "abcdefgh abcdefgh abcdefgh")).toBeGreaterThan(occurrences(dropped.path, "abcdefgh abcdefgh abcdefgh"));
  });

  it("refuses an unknown retention value, naming it", () => {
    expect(() => createSqliteEventLog({ path: join(dir, "bad.db"), retention: { endedMessageDeltas: "sometimes" as "drop" } })).toThrow(/retention.endedMessageDeltas must be "keep", "drop" or "delete", got "sometimes"/);
  });
});

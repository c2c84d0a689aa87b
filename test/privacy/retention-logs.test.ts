/**
 * Retention of streamed deltas on the PostgreSQL and in-memory logs (the SQLite log's is in
 * `retention.test.ts`), and the CLI's `--retention` (default `delete-deltas`: the rows go; `drop-deltas`; `keep`): a real run's `message.delta`
 * events lose their text once the message ended and was kept, the saving is reported, the entry
 * keeps the full text and versions stay contiguous.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";

type Saved = { messageId: string; events: number; bytes: number };
const schema = useTestSchemas("retention");
let server: OpenAIServer;
let dir: string;
beforeAll(async () => {
  dir = tempDir("arbor-retention-logs-");
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const deltas = (events: StoredEvent[]) => events.filter((event) => event.type === "message.delta").map((event) => (event.data as { delta: string }).delta);

describe.each([
  ["PostgreSQL", (retention?: { endedMessageDeltas: "drop"; onDropped: (saved: Saved) => void }) => {
    const name = schema();
    return { log: createPostgresEventLog({ connectionString: PG_URL, schema: name, ...(retention ? { retention } : {}) }), schema: name };
  }],
  ["memory", (retention?: { endedMessageDeltas: "drop"; onDropped: (saved: Saved) => void }) => ({ log: createMemoryEventLog(retention ? { retention } : {}), schema: undefined })],
] as [string, (retention?: { endedMessageDeltas: "drop"; onDropped: (saved: Saved) => void }) => { log: EventLog; schema?: string }][])("retention on the %s log", (_name, open) => {
  async function run(drop: boolean) {
    const saved: Saved[] = [];
    const { log, schema: pgSchema } = open(drop ? { endedMessageDeltas: "drop", onDropped: (entry) => saved.push(entry) } : undefined);
    const reply = "DELTA-TEXT-" + "abcdefgh ".repeat(120) + "é";
    server.script(textResponse(reply));
    try {
      const harness = await createHarness({ eventLog: log, models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) }, cwd: dir });
      const outcome = await harness.prompt("write a long reply");
      await harness.close();
      const events = await log.readStream(`session-${harness.id}`);
      let rows: string[] = [];
      if (pgSchema) {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        rows = (await client.query(`SELECT data->>'delta' AS delta FROM "${pgSchema}".events WHERE type = 'message.delta' ORDER BY global_position`)).rows.map((row) => row.delta as string);
        await client.end();
      }
      return { saved, outcome, events, reply, rows };
    } finally {
      await log.close();
    }
  }

  it("empties the kept message's deltas, keeps the entry's full text, and reports the bytes saved", async () => {
    const kept = await run(false);
    const dropped = await run(true);
    expect(dropped.outcome.status).toBe("done");
    expect(deltas(kept.events).join("")).toBe(kept.reply);
    expect(deltas(dropped.events).length).toBe(deltas(kept.events).length);
    expect(deltas(dropped.events).every((delta) => delta === "")).toBe(true);
    expect(dropped.saved).toEqual([{ messageId: expect.any(String), events: deltas(dropped.events).length, bytes: Buffer.byteLength(dropped.reply) }]);
    const entry = dropped.events.find((event) => event.type === "entry.appended" && JSON.stringify(event.data).includes("DELTA-TEXT-"));
    expect(JSON.stringify(entry?.data)).toContain(JSON.stringify(dropped.reply).slice(1, -1));
    expect(dropped.events.map((event) => event.version)).toEqual(dropped.events.map((_, index) => index + 1));
    // On PostgreSQL the stored rows themselves hold no text any more.
    if (dropped.rows.length > 0) expect(dropped.rows.every((delta) => delta === "")).toBe(true);
    expect(kept.saved).toEqual([]);
  });

  it("refuses an unknown retention value, naming it", () => {
    expect(() => open({ endedMessageDeltas: "sometimes" as "drop", onDropped: () => undefined })).toThrow(/retention.endedMessageDeltas must be "keep", "drop" or "delete", got "sometimes"/);
  });
});

describe("arbor --retention", { timeout: 120_000 }, () => {
  it("drop-deltas empties the stored deltas of the run's reply; a bad value is refused by name", async () => {
    const db = join(dir, "cli.db");
    server.script(textResponse("Hello from a CLI run with retention."));
    const ran = await runArbor(["--db", db, "--retention", "drop-deltas", "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "hi"], { env: { OPENAI_API_KEY: "test-key" } });
    expect(ran.code).toBe(0);
    const listed = await runArbor(["--db", db, "events", "latest", "--json"]);
    expect(listed.code).toBe(0);
    const events = listed.stdout.trim().split("\n").map((line) => JSON.parse(line) as StoredEvent);
    const texts = deltas(events);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.every((delta) => delta === "")).toBe(true);
    expect(JSON.stringify(events)).toContain("Hello from a CLI run with retention.");
    const bad = await runArbor(["--db", db, "--retention", "sometimes", "sessions"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--retention \(or ARBOR_RETENTION\) must be delete-deltas, drop-deltas or keep; got "sometimes"/);
  });

  it("deletes the stored deltas of the run's reply by default; --retention keep keeps them", async () => {
    const reply = "Hello from a CLI run with the default retention.";
    const eventsOf = async (db: string) => {
      const listed = await runArbor(["--db", db, "events", "latest", "--json"]);
      expect(listed.code, listed.stderr).toBe(0);
      return listed.stdout.trim().split("\n").map((line) => JSON.parse(line) as StoredEvent);
    };
    const byDefault = join(dir, "cli-default.db");
    server.script(textResponse(reply));
    const ran = await runArbor(["--db", byDefault, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "hi"], { env: { OPENAI_API_KEY: "test-key" } });
    expect(ran.code, ran.stderr).toBe(0);
    const deleted = await eventsOf(byDefault);
    expect(deleted.filter((event) => event.type === "message.delta")).toEqual([]);
    expect(JSON.stringify(deleted)).toContain(reply);
    expect(deleted.map((event) => event.type)).toContain("message.ended");

    const kept = join(dir, "cli-keep.db");
    server.script(textResponse(reply));
    const keptRun = await runArbor(["--db", kept, "--retention", "keep", "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "hi"], { env: { OPENAI_API_KEY: "test-key" } });
    expect(keptRun.code, keptRun.stderr).toBe(0);
    const keptEvents = await eventsOf(kept);
    expect(deltas(keptEvents).join("")).toBe(reply);
    // Same events but the deltas, at the same versions.
    expect(deleted.map((event) => event.type)).toEqual(keptEvents.filter((event) => event.type !== "message.delta").map((event) => event.type));
    expect(deleted.map((event) => event.version)).toEqual(keptEvents.filter((event) => event.type !== "message.delta").map((event) => event.version));
  });
});

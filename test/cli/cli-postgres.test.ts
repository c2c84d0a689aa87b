/**
 * `arbor --db postgres://...`: the real CLI process on a PostgreSQL log (schema from
 * ARBOR_DB_SCHEMA), real HTTP to the loopback OpenAI server; the session written by
 * one CLI process is continued by another and read back by the library.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { PG_URL, useTestSchemas } from "../store/pg-test-db.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

const newSchema = useTestSchemas("cli");
let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

describe("arbor --db postgres://", () => {
  it("runs, lists and continues a session stored in PostgreSQL", async () => {
    const schema = newSchema();
    const dir = tempDir();
    const env = { OPENAI_API_KEY: "test-key", ARBOR_DB_SCHEMA: schema };
    const run = (prompt: string, ...extra: string[]) =>
      runArbor(["--db", PG_URL, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, ...extra, prompt], { env });
    server.script(textResponse("first answer"), textResponse("second answer"));
    const first = await run("hello postgres");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("first answer");
    const listed = await runArbor(["--db", PG_URL, "sessions", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const sessions = JSON.parse(listed.stdout) as { id: string }[];
    expect(sessions).toHaveLength(1);
    const second = await run("and again", "--session", sessions[0].id);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("second answer");

    const log = createPostgresEventLog({ connectionString: PG_URL, schema, poolSize: 1 });
    const events = await log.readStream(`session-${sessions[0].id}`);
    await log.close();
    // Versions rise from 1; the default retention (delete-deltas) leaves gaps only inside a message
    // (its deleted deltas), and no delta of the ended, kept replies is left.
    expect(events[0].version).toBe(1);
    const open = new Set<string>();
    events.forEach((event, index) => {
      if (index > 0 && event.version !== events[index - 1].version + 1) expect({ gapAt: event.version, open: open.size > 0 }).toEqual({ gapAt: event.version, open: true });
      expect(index === 0 || event.version > events[index - 1].version).toBe(true);
      const messageId = (event.data as { messageId?: string }).messageId;
      if (event.type === "message.started" && messageId) open.add(messageId);
      if (event.type === "message.ended" && messageId) open.delete(messageId);
    });
    expect(events.filter((event) => event.type === "message.delta")).toEqual([]);
    expect(events.filter((event) => event.type === "run.started")).toHaveLength(2);
    // The second request carried the first exchange: the context came from PostgreSQL.
    expect(JSON.stringify(server.requests[1].body.messages)).toContain("first answer");
  }, 60_000);
});

/**
 * A log written by main before the typed event catalogue (commit 4397c80, fixture made by
 * `test/fixtures/main-log/generate.ts`) opens, projects and continues: old names
 * (`run.finished|failed|aborted|interrupted`, `tool.finished`, `retry.finished`) are read
 * as `run.ended` / `tool.ended` / `retry.ended` on every read path, the tree and the
 * context equal what the old code projected, and a new prompt appends after the old events.
 * The committed file is never opened in place: each test works on a copy.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { firstValueFrom, takeWhile, toArray } from "rxjs";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { exportPiSession } from "../../src/adapters/pi-jsonl/export.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { isEventOfType, ofType } from "../../src/store/events/catalogue.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { runArbor } from "../cli/cli-helpers.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/main-log/main-log.db", import.meta.url));
const EXPECTED = JSON.parse(readFileSync(fileURLToPath(new URL("../fixtures/main-log/main-log.expected.json", import.meta.url)), "utf8")) as {
  sessionId: string;
  leafId: string;
  entryIds: string[];
  tree: unknown;
  context: unknown;
  labels: Record<string, string>;
};
const OLD_TYPES = ["run.finished", "run.failed", "run.aborted", "run.interrupted", "tool.finished", "retry.finished"];
const streamId = sessionStreamId(EXPECTED.sessionId);

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function copyOfFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), "arbor-old-log-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "arbor.db");
  copyFileSync(FIXTURE, path);
  return path;
}

function openLog(path: string): EventLog {
  const log = createSqliteEventLog({ path });
  cleanups.push(() => log.close());
  return log;
}

const terminalStatuses = (events: StoredEvent[]) => events.flatMap((event) => (isEventOfType(event, "run.ended") ? [event.data.status] : []));

describe("a log written by main 4397c80 (before the event catalogue)", () => {
  it("reads old names as the current catalogue on readStream, readAll, filtered reads and subscriptions", async () => {
    const log = openLog(copyOfFixture());
    const events = await log.readStream(streamId);
    expect(events.map((event) => event.type).filter((type) => OLD_TYPES.includes(type))).toEqual([]);
    expect(terminalStatuses(events)).toEqual(["done", "done", "failed", "aborted", "interrupted", "done"]);
    for (const event of events.filter((event) => ["run.ended", "tool.ended", "retry.ended"].includes(event.type))) expect(event.schemaVersion).toBe(2);
    const ends = events.filter((event) => isEventOfType(event, "run.ended"));
    expect(ends.find((event) => event.data.status === "failed")?.data).toMatchObject({ error: expect.stringContaining("bad request") });
    expect(ends.find((event) => event.data.status === "aborted")?.data).toMatchObject({ reason: "user pressed escape" });

    const all = await log.readAll();
    expect(all.map((event) => event.type)).toEqual(events.map((event) => event.type));
    expect(terminalStatuses(await log.readAll({ types: ["run.ended"] }))).toEqual(["done", "done", "failed", "aborted", "interrupted", "done"]);
    expect((await log.readAll({ types: ["retry.ended"] })).map((event) => event.data)).toEqual([{ attempt: 1, success: true }]);

    const tools = await firstValueFrom(
      log.subscribe({ streamId }).pipe(
        takeWhile((event) => event.version < events.length, true),
        ofType("tool.ended"),
        toArray(),
      ),
    );
    expect(tools.map((event) => [event.data.toolName, event.data.outcome, event.data.isError])).toEqual([["read", "succeeded", false]]);
    const filtered = await firstValueFrom(log.subscribe({ streamId, types: ["tool.ended"] }).pipe(takeWhile(() => false, true), toArray()));
    expect(filtered.map((event) => event.type)).toEqual(["tool.ended"]);
  });

  it("projects the tree, the leaf, the labels and the context the old code projected; pi export reads it", async () => {
    const log = openLog(copyOfFixture());
    const session = await createSessionRepository({ log }).open(EXPECTED.sessionId);
    expect(session.view.leafId).toBe(EXPECTED.leafId);
    expect(session.view.getEntries().map((entry) => entry.id)).toEqual(EXPECTED.entryIds);
    expect(JSON.parse(JSON.stringify(session.view.getTree()))).toEqual(EXPECTED.tree);
    expect(JSON.parse(JSON.stringify(session.view.buildContext()))).toEqual(EXPECTED.context);
    for (const [entryId, label] of Object.entries(EXPECTED.labels)) expect(session.view.getLabel(entryId)).toBe(label);
    const types = session.view.getEntries().map((entry) => entry.type);
    expect(types).toEqual(expect.arrayContaining(["compaction", "branch_summary", "label", "message"]));
    const exported = exportPiSession(session).trim().split("\n").map((line) => JSON.parse(line) as { type: string; id?: string });
    expect(exported[0].type).toBe("session");
    expect(exported.slice(1).map((line) => line.id).sort()).toEqual([...EXPECTED.entryIds].sort());
  });

  it("the CLI's events command prints the current names", async () => {
    const path = copyOfFixture();
    const result = await runArbor(["--db", path, "events", EXPECTED.sessionId, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const types = result.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.filter((type) => OLD_TYPES.includes(type))).toEqual([]);
    expect(types.filter((type) => type === "run.ended")).toHaveLength(6);
  });

  it("continues: a new prompt over the loopback server appends after the old events, which stay as they were", async () => {
    const path = copyOfFixture();
    const before = await (async () => {
      const log = createSqliteEventLog({ path });
      const events = await log.readStream(streamId);
      await log.close();
      return events;
    })();
    const server: OpenAIServer = await startOpenAIServer();
    cleanups.push(() => server.close());
    const harness: AgentHarness = await createHarness({
      eventLogPath: path,
      sessionId: EXPECTED.sessionId,
      models: { main: { model: createOpenAIModel({ modelId: "gpt-fixture", baseURL: server.url, apiKey: "sk-test", api: "chat" }), contextWindow: 128_000 } },
    });
    cleanups.push(() => harness.close());
    server.script(textResponse("continued after the upgrade"));
    const outcome = await harness.prompt("one more question");
    expect(outcome.status).toBe("done");
    const messages = harness.session.view.buildContext().messages;
    expect(messages.slice(0, -2)).toEqual((EXPECTED.context as { messages: unknown[] }).messages);
    expect(messages.slice(-2).map((message) => message.role)).toEqual(["user", "assistant"]);
    // The model saw the old context (the path back to the first answer, then the turn after the crash) plus the new prompt.
    const sent = (server.requests[0].body.messages as { role: string; content: unknown }[]).filter((message) => message.role === "user").map((message) => message.content);
    expect(sent).toEqual(["what is in a.txt?", "after the crash", "one more question"]);

    const log = openLog(path);
    const after = await log.readStream(streamId);
    expect(after.slice(0, before.length)).toEqual(before);
    const appended = after.slice(before.length);
    expect(appended[0].version).toBe(before.length + 1);
    expect(appended.at(-1)).toMatchObject({ type: "run.ended", schemaVersion: 2, data: { status: "done" } });
  });
});

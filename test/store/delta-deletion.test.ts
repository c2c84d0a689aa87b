/**
 * `retention: { endedMessageDeltas: "delete" }` (issue 17 P6) on a real SQLite file, real
 * PostgreSQL and the in-memory log: a real harness run against the loopback OpenAI server. The
 * `message.delta` rows of each ended, kept message are gone (counted in the storage itself); every
 * other event keeps the version, position and payload it was committed with; reads and
 * subscriptions from a version or a position inside the gap continue after it; an append with
 * the stream's version appends, one with a stale version conflicts; the session reopens (a new
 * log on the same file or schema) and a second prompt sees the first reply; deltas of a message
 * that never ended stay.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { firstValueFrom, take, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExpectedVersionConflictError } from "../../src/core/errors.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { tempDir } from "../cli/cli-helpers.ts";
import { spawnTsx } from "./child-process.ts";
import { PG_URL, useTestSchemas } from "./pg-test-db.ts";

type Saved = { messageId: string; events: number; bytes: number };
const schema = useTestSchemas("deltas");
let server: OpenAIServer;
let dir: string;
beforeAll(async () => {
  dir = tempDir("arbor-delta-deletion-");
  writeFileSync(join(dir, "note.txt"), "a note to read\n");
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});

/** A log whose appends are recorded as committed (the events' versions and positions before any deletion). */
function recording(log: EventLog): { log: EventLog; committed: StoredEvent[] } {
  const committed: StoredEvent[] = [];
  const wrapped: EventLog = {
    ...log,
    async append(streamId, events, options) {
      const result = await log.append(streamId, events, options);
      committed.push(...result.events);
      return result;
    },
  };
  return { log: wrapped, committed };
}

/** Each kind of log: open (again) on the same storage, and count the delta rows stored. */
interface Target {
  open(saved: Saved[]): EventLog;
  storedDeltaRows(): Promise<number>;
}

const targets: [string, () => Target][] = [
  [
    "SQLite file",
    () => {
      const path = join(dir, `log-${Math.random().toString(16).slice(2)}.db`);
      return {
        open: (saved) => createSqliteEventLog({ path, retention: { endedMessageDeltas: "delete", onDropped: (entry) => saved.push(entry) } }),
        async storedDeltaRows() {
          const db = new Database(path, { readonly: true });
          try {
            return db.prepare("SELECT count(*) FROM events WHERE type = 'message.delta'").pluck().get() as number;
          } finally {
            db.close();
          }
        },
      };
    },
  ],
  [
    "PostgreSQL",
    () => {
      const name = schema();
      return {
        open: (saved) => createPostgresEventLog({ connectionString: PG_URL, schema: name, retention: { endedMessageDeltas: "delete", onDropped: (entry) => saved.push(entry) } }),
        async storedDeltaRows() {
          const client = new pg.Client({ connectionString: PG_URL });
          await client.connect();
          try {
            return Number((await client.query(`SELECT count(*) AS n FROM "${name}".events WHERE type = 'message.delta'`)).rows[0].n);
          } finally {
            await client.end();
          }
        },
      };
    },
  ],
  [
    "in-memory",
    () => {
      let log: EventLog | undefined;
      return {
        // The memory log cannot be reopened: "reopening" gives the same log (a new harness folds it again).
        open: (saved) => {
          log ??= createMemoryEventLog({ retention: { endedMessageDeltas: "delete", onDropped: (entry) => saved.push(entry) } });
          return { ...log, close: async () => undefined };
        },
        async storedDeltaRows() {
          return (await log!.readAll()).filter((event) => event.type === "message.delta").length;
        },
      };
    },
  ],
];

const model = () => createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
const REPLY = "DELTA-TEXT-" + "abcdefgh ".repeat(40) + "é";
const SECOND = "The second reply, after the reopen.";

describe.each(targets)("delete retention on the %s log", { timeout: 60_000 }, (name, make) => {
  it("deletes the kept messages' delta rows, keeps every other event as committed, and the session goes on", async () => {
    const target = make();
    const saved: Saved[] = [];
    const first = recording(target.open(saved));
    server.script(
      errorResponse(503),
      toolCallResponse([{ id: "call_read", name: "read", arguments: { path: "note.txt" } }], { text: "Reading the note first, word by word.", delayMs: 1 }),
      textResponse(REPLY, { delayMs: 1 }),
    );
    const harness = await createHarness({ eventLog: first.log, models: { main: model() }, cwd: dir, retry: { baseDelayMs: 1 } });
    const outcome = await harness.prompt("read the note, then write a long reply");
    expect(outcome.error ?? outcome.status).toBe("done");
    const streamId = `session-${harness.id}`;
    await harness.close();

    const committed = first.committed.filter((event) => event.streamId === streamId);
    const committedDeltas = committed.filter((event) => event.type === "message.delta");
    expect(committedDeltas.length).toBeGreaterThan(3);
    const kept = new Set(committed.flatMap((event) => (event.type === "message.ended" && (event.data as { entryId?: string }).entryId !== undefined ? [(event.data as { messageId: string }).messageId] : [])));
    const gone = committedDeltas.filter((event) => kept.has((event.data as { messageId: string }).messageId));
    expect(gone).toHaveLength(committedDeltas.length);

    // The rows themselves are gone; the saving is reported per message.
    expect(await target.storedDeltaRows()).toBe(0);
    expect(saved.reduce((sum, entry) => sum + entry.events, 0)).toBe(gone.length);
    expect(new Set(saved.map((entry) => entry.messageId))).toEqual(new Set(gone.map((event) => (event.data as { messageId: string }).messageId)));

    // Everything else is as committed: same ids, versions, positions, payloads.
    const goneIds = new Set(gone.map((event) => event.eventId));
    const log = first.log;
    const stored = await log.readStream(streamId);
    const strip = (event: StoredEvent) => ({ eventId: event.eventId, version: event.version, globalPosition: event.globalPosition, type: event.type, data: event.data, metadata: event.metadata });
    expect(stored.map(strip)).toEqual(committed.filter((event) => !goneIds.has(event.eventId)).map(strip));
    const lastVersion = committed.at(-1)!.version;
    expect(await log.streamVersion(streamId)).toBe(lastVersion);
    expect(stored.at(-1)!.version).toBe(lastVersion);

    // Reads and subscriptions from inside the gap continue right after it.
    const inGap = gone[Math.floor(gone.length / 2)];
    const after = stored.filter((event) => event.version > inGap.version);
    const before = stored.filter((event) => event.version < inGap.version);
    expect((await log.readStream(streamId, { fromVersion: inGap.version, limit: 1 })).map(strip)).toEqual([strip(after[0])]);
    expect((await log.readStream(streamId, { fromVersion: inGap.version, limit: 1, direction: "backwards" })).map(strip)).toEqual([strip(before.at(-1)!)]);
    const fromVersion = await firstValueFrom(log.subscribe({ streamId, fromVersion: inGap.version }).pipe(take(after.length), toArray()));
    expect(fromVersion.map(strip)).toEqual(after.map(strip));
    const fromPosition = await firstValueFrom(log.subscribe({ streamId, fromPosition: inGap.globalPosition }).pipe(take(after.length), toArray()));
    expect(fromPosition.map(strip)).toEqual(after.map(strip));
    const allFromPosition = (await log.readAll({ fromPosition: inGap.globalPosition })).filter((event) => event.streamId === streamId);
    expect(allFromPosition.map(strip)).toEqual(after.map(strip));

    // Optimistic concurrency: the stream's version still is the next expectedVersion; a stale one conflicts.
    await expect(log.append(streamId, [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }], { expectedVersion: inGap.version })).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    const moved = stored.filter((event) => event.type === "entry.appended").at(-1)!;
    const leafId = (moved.data as { entry: { id: string } }).entry.id;
    const appended = await log.append(streamId, [{ type: "leaf.moved", data: { leafId, fromLeafId: leafId } }], { expectedVersion: lastVersion });
    expect(appended.nextExpectedVersion).toBe(lastVersion + 1);
    await log.close();

    // Reopen on the same storage: the session folds across the gaps and a second prompt sees the first reply.
    const second = recording(target.open(saved));
    server.script(textResponse(SECOND));
    const reopened = await createHarness({ eventLog: second.log, models: { main: model() }, cwd: dir, sessionId: harness.id });
    expect((await reopened.prompt("and now?")).status).toBe("done");
    await reopened.close();
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain(JSON.stringify(REPLY).slice(1, -1));
    const afterReopen = await second.log.readStream(streamId);
    expect(afterReopen.filter((event) => event.type === "message.delta")).toEqual([]);
    expect(afterReopen.slice(0, stored.length + 1).map(strip)).toEqual([...stored, ...appended.events].map(strip));
    expect(JSON.stringify(afterReopen.at(-1))).not.toContain("message.delta");
    expect(afterReopen.some((event) => event.type === "entry.appended" && JSON.stringify(event.data).includes(SECOND))).toBe(true);
    await second.log.close();
    void name;
  });

  it("keeps the deltas of a message that has not ended, and of one ended without an entry", async () => {
    const target = make();
    const saved: Saved[] = [];
    const log = target.open(saved);
    const streamId = "session-open-message";
    const meta = { runId: "run-1" };
    const delta = (messageId: string, text: string) => ({ type: "message.delta", data: { messageId, contentIndex: 0, kind: "text", delta: text }, metadata: meta });
    await log.append(streamId, [{ type: "message.started", data: { messageId: "m-open", role: "assistant" }, metadata: meta }, delta("m-open", "still "), delta("m-open", "streaming")]);
    await log.append(streamId, [{ type: "message.started", data: { messageId: "m-retried", role: "assistant" }, metadata: meta }, delta("m-retried", "discarded")]);
    await log.append(streamId, [{ type: "message.ended", data: { messageId: "m-retried", role: "assistant", stopReason: "error", errorMessage: "retried" }, metadata: meta }]);
    const events = await log.readStream(streamId);
    expect(events.filter((event) => event.type === "message.delta").map((event) => (event.data as { delta: string }).delta)).toEqual(["still ", "streaming", "discarded"]);
    expect(events.map((event) => event.version)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(saved).toEqual([]);
    await log.close();
  });
});

describe("delete retention and kill -9", { timeout: 60_000 }, () => {
  it("a process killed mid-message leaves that message's deltas; closing it later with an entry deletes them", async () => {
    const path = join(dir, "killed.db");
    const child = spawnTsx("test/store/fixtures-log/delta-writer.ts", [path]);
    const ready = await child.nextLine();
    expect(ready).toBe("ready 10");
    child.process.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");

    const saved: Saved[] = [];
    const log = createSqliteEventLog({ path, retention: { endedMessageDeltas: "delete", onDropped: (entry) => saved.push(entry) } });
    const texts = (events: StoredEvent[]) => events.filter((event) => event.type === "message.delta").map((event) => [event.version, (event.data as { delta: string }).delta]);
    const events = await log.readStream("session-crash");
    // The ended, kept message lost its deltas (versions 2-4); the one cut off keeps all of its own.
    expect(events.map((event) => event.version)).toEqual([1, 5, 6, 7, 8, 9, 10]);
    expect(texts(events)).toEqual([[7, "cut "], [8, "off "], [9, "mid "], [10, "message"]]);
    // What recovery does: it closes the message with an entry holding the text; then they go.
    await log.append("session-crash", [{ type: "message.ended", data: { messageId: "m-open", role: "assistant", entryId: "e-open", stopReason: "aborted" }, metadata: { runId: "run-crash" } }], { expectedVersion: 10 });
    expect(saved).toEqual([{ messageId: "m-open", events: 4, bytes: "cut off mid message".length }]);
    expect((await log.readStream("session-crash")).map((event) => event.version)).toEqual([1, 5, 6, 11]);
    await log.close();
  });
});

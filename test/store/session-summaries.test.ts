/**
 * The session list reads the summary rows the writer keeps (issue 17 P8), and always matches the
 * folded truth (every event of every session folded by the tree projection, as the list did
 * before): after appends, names, labels, leaf moves, forks and deletes; on a real SQLite file and
 * on real PostgreSQL; on a schema-1 file opened read-only (no rows: it folds) and after that file's
 * migration (rows backfilled); with rows an older writer left behind; after kill -9 of a writer.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/core/messages.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { sessionIdOfStream, sessionStreamId } from "../../src/store/events/session-events.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSessionTree } from "../../src/store/session/session-tree.ts";
import type { SessionRepository, SessionSummary } from "../../src/store/session-types.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { spawnTsx } from "./child-process.ts";
import { PG_URL, testClient, useTestSchemas } from "./pg-test-db.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-summaries-"));
afterAll(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});
let counter = 0;
const newPath = () => join(dir, `log-${counter++}.db`);
const nextSchema = useTestSchemas("sum");

const user = (text: string, timestamp: number): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp });
const assistant = (text: string, timestamp: number): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "test",
  provider: "p",
  model: "m",
  usage: { input: 3, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 4, cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 } },
  stopReason: "stop",
  timestamp,
});
const noUsage = (text: string, timestamp: number) => ({ ...assistant(text, timestamp), usage: undefined }) as unknown as AgentMessage;

/** The list as folding every event of every session with the tree projection gives it. */
async function foldedTruth(log: EventLog, withStats = false): Promise<SessionSummary[]> {
  const rows: SessionSummary[] = [];
  for (const stream of await log.listStreams()) {
    const id = sessionIdOfStream(stream.streamId);
    if (id === undefined) continue;
    const events = await log.readStream(stream.streamId);
    if (events[0]?.type !== "session.created") continue;
    const tree = createSessionTree();
    tree.applyAll(events);
    const { state } = tree;
    const info = state.info!;
    const row: SessionSummary = {
      id,
      cwd: info.cwd,
      created: info.createdAt,
      modified: state.lastActivity !== undefined ? new Date(state.lastActivity).toISOString() : info.createdAt,
      messageCount: state.messageCount,
      firstMessage: state.firstUserMessage ?? "(no messages)",
      tenant: info.tenant ?? "default",
      updatedAt: stream.updatedAt,
    };
    if (state.name !== undefined) row.name = state.name;
    if (info.parentSessionId !== undefined) row.parentSessionId = info.parentSessionId;
    if (withStats) row.stats = state.index.stats.snapshot();
    rows.push(row);
  }
  // The one order of session lists: the most recently appended first; a tie, the later stream first.
  const start = new Map((await log.listStreams()).map((stream, index) => [stream.streamId, index]));
  return rows.sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || start.get(`session-${b.id}`)! - start.get(`session-${a.id}`)!);
}

/** `repo.list()` equals the folded truth, with and without statistics. */
async function expectListMatches(repo: SessionRepository, log: EventLog = repo.log): Promise<void> {
  expect(await repo.list()).toEqual(await foldedTruth(log));
  expect(await repo.list({ stats: true })).toEqual(await foldedTruth(log, true));
}

/** Every session stream has a row covering all of it. */
async function expectCompleteRows(log: EventLog): Promise<void> {
  const rows = new Map((await log.sessionSummaries!.read()).map((row) => [row.streamId, row]));
  const streams = (await log.listStreams()).filter((stream) => sessionIdOfStream(stream.streamId) !== undefined);
  expect(streams.length).toBeGreaterThan(0);
  for (const stream of streams) expect(rows.get(stream.streamId), stream.streamId).toMatchObject({ fromVersion: 1, version: stream.version });
  expect(rows.size).toBe(streams.length);
}

/** Sessions with messages of both roles, names set and cleared, labels, leaf moves, a fork and a delete. */
async function populate(repo: SessionRepository): Promise<void> {
  const a = await repo.create({ id: "a", cwd: "/a" });
  const [u1] = await a.appendEntries([{ type: "message", message: user("", 1_000) }, { type: "message", message: user("first words", 2_000) }]);
  await a.appendEntry({ type: "message", message: assistant("reply", 3_000) });
  await a.appendEntry({ type: "session_info", name: "  Alpha " });
  await a.appendEntry({ type: "label", targetId: u1.id, label: "start" });
  await a.moveLeaf(u1.id);
  await a.appendEntry({ type: "message", message: user("a branch", 2_500) });
  const b = await repo.create({ id: "b", cwd: "/b" });
  await b.appendEntry({ type: "session_info", name: "Beta" });
  await b.appendEntry({ type: "message", message: assistant("only the assistant", 9_000) });
  await b.appendEntry({ type: "session_info", name: "" });
  await b.appendEntry({ type: "message", message: noUsage("usage unknown", 8_000) });
  await b.appendEntry({ type: "usage", kind: "compaction", provider: "p", model: "m", usage: { input: 10, output: 5, totalTokens: 15 } } as never);
  await repo.create({ id: "empty", cwd: "/e" });
  const doomed = await repo.create({ id: "doomed", cwd: "/d" });
  await doomed.appendEntry({ type: "message", message: user("bye", 4_000) });
  await repo.fork("a", { newId: "a-fork" });
  await repo.delete("doomed");
  await repo.log.append("workflow-1", [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }]);
}

describe("session summary rows on a SQLite file", () => {
  it("list matches the folded truth after appends, names, labels, moves, a fork and a delete, from complete rows", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    const repo = createSessionRepository({ log });
    await populate(repo);
    await expectCompleteRows(log);
    const truth = await foldedTruth(log);
    expect(truth.map((row) => row.id).sort()).toEqual(["a", "a-fork", "b", "empty"]);
    expect(truth.find((row) => row.id === "a")).toMatchObject({ name: "Alpha", messageCount: 4, firstMessage: "first words" });
    await expectListMatches(repo);
    expect(truth.find((row) => row.id === "b")).toBeDefined();
    expect((await repo.list({ stats: true })).find((row) => row.id === "b")?.stats).toMatchObject({ usageEntries: 1, unknownUsageMessages: 1, tokens: { total: 19 } });
    await log.close();
    // A fresh process (new repository, read-only) reads the same from the rows.
    const reader = createSqliteEventLog({ path, readOnly: true });
    await expectListMatches(createSessionRepository({ log: reader }));
    await reader.close();
  });

  it("a schema-1 file lists the same read-only (no rows, a read-only file), and its first writable open backfills the rows", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    await populate(createSessionRepository({ log }));
    const truth = await foldedTruth(log);
    await log.close();
    // Back to schema version 1 exactly: version 2 only added the table.
    const raw = new Database(path);
    raw.exec("DROP TABLE session_summaries; DELETE FROM arbor_migrations WHERE version = 2;");
    raw.pragma("user_version = 1");
    raw.pragma("journal_mode = DELETE");
    raw.close();
    chmodSync(path, 0o444);
    const reader = createSqliteEventLog({ path, readOnly: true });
    expect(reader.sessionSummaries).toBeUndefined();
    expect(await createSessionRepository({ log: reader }).list()).toEqual(truth);
    await expectListMatches(createSessionRepository({ log: reader }));
    await reader.close();
    chmodSync(path, 0o644);
    const writer = createSqliteEventLog({ path });
    await expectCompleteRows(writer);
    expect(await createSessionRepository({ log: writer }).list()).toEqual(truth);
    await expectListMatches(createSessionRepository({ log: writer }));
    await writer.close();
  });

  it("folds what a row lacks: a row an older writer left behind, and one that starts after version 1", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    const repo = createSessionRepository({ log });
    await populate(repo);
    await log.close();
    const raw = new Database(path);
    // An older writer appended without keeping rows: "a"'s row ends 3 versions early (before its
    // label, leaf move and branch message).
    raw.prepare("UPDATE session_summaries SET version = version - 3, message_count = message_count - 1, msg_user = msg_user - 1 WHERE stream_id = ?").run(sessionStreamId("a"));
    // "b"'s row was created by an append to a stream that had no row: it covers versions 3.. only
    // (versions 1 and 2 are session.created and the name "Beta", later cleared).
    raw.prepare("UPDATE session_summaries SET from_version = 3, name_set = 1, name = NULL, info = NULL, starts = 0 WHERE stream_id = ?").run(sessionStreamId("b"));
    raw.close();
    const reopened = createSqliteEventLog({ path });
    const again = createSessionRepository({ log: reopened });
    await expectListMatches(again);
    // The row left behind is not extended (it would skip versions): it stays behind and the list stays right.
    const session = await again.open("a");
    await session.appendEntry({ type: "message", message: user("more", 10_000) });
    const rowA = (await reopened.sessionSummaries!.read()).find((row) => row.streamId === sessionStreamId("a"))!;
    expect(rowA.version).toBeLessThan(await reopened.streamVersion(sessionStreamId("a")));
    await expectListMatches(again);
    await expectListMatches(createSessionRepository({ log: reopened }));
    await reopened.close();
  });

  it("after kill -9 of a process appending to sessions in a loop, the rows match the committed events", { timeout: 60_000 }, async () => {
    const path = newPath();
    const script = join(dir, "writer.mts");
    writeFileSync(
      script,
      `import { createSqliteEventLog } from ${JSON.stringify(join(process.cwd(), "src/store/sqlite/sqlite-event-log.ts"))};
import { createSessionRepository } from ${JSON.stringify(join(process.cwd(), "src/store/session-repository.ts"))};
const log = createSqliteEventLog({ path: process.argv[2] });
const repo = createSessionRepository({ log });
const sessions = [];
for (let s = 0; s < 4; s++) sessions.push(await repo.create({ id: "k" + s, cwd: "/k" }));
for (let n = 0; ; n++) {
  const session = sessions[n % 4];
  await Promise.all([
    session.appendEntry({ type: "message", message: { role: "user", content: "m" + n, timestamp: 1000 + n } }),
    n % 7 === 0 ? session.appendEntry({ type: "session_info", name: "n" + n }) : Promise.resolve(),
  ]);
  console.log("committed " + n);
}
`,
    );
    const writer = spawnTsx(script, [path]);
    for (let seen = -1; seen < 40; ) {
      const match = /^committed (\d+)$/.exec(await writer.nextLine());
      seen = Number(match?.[1]);
    }
    writer.process.kill("SIGKILL");
    expect((await writer.exited).signal).toBe("SIGKILL");
    const log = createSqliteEventLog({ path });
    await expectCompleteRows(log);
    const truth = await foldedTruth(log);
    expect(truth).toHaveLength(4);
    expect(truth.reduce((sum, row) => sum + row.messageCount, 0)).toBeGreaterThanOrEqual(41);
    expect(await createSessionRepository({ log }).list()).toEqual(truth);
    await expectListMatches(createSessionRepository({ log }));
    await log.close();
  });
});

describe("session summary rows on PostgreSQL", () => {
  it("list matches the folded truth from complete rows, and a tenant-scoped list sees its own", async () => {
    const schema = nextSchema();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema });
    const repo = createSessionRepository({ log });
    await populate(repo);
    const other = await createSessionRepository({ log, tenant: "t2" }).create({ id: "t2-only", cwd: "/t" });
    await other.appendEntry({ type: "message", message: user("tenant two", 20_000) });
    await expectCompleteRows(log);
    const truth = await foldedTruth(log);
    expect(await repo.list()).toEqual(truth);
    await expectListMatches(repo);
    expect((await createSessionRepository({ log, tenant: "t2" }).list()).map((row) => row.id)).toEqual(["t2-only"]);
    expect((await createSessionRepository({ log, tenant: "default" }).list()).map((row) => row.id).sort()).toEqual(["a", "a-fork", "b", "empty"]);
    await log.close();
  });

  it("an upgrade from schema 2 backfills the rows of existing sessions", async () => {
    const schema = nextSchema();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema });
    await populate(createSessionRepository({ log }));
    const truth = await foldedTruth(log);
    await log.close();
    const client = await testClient();
    // A schema-2 log: without migration 3's summary table and every later migration's columns.
    await client.query(
      `DROP TABLE "${schema}".session_summaries CASCADE; ALTER TABLE "${schema}".stream_owners DROP COLUMN expires_at, DROP COLUMN backend_pid; DROP FUNCTION "${schema}".append_rows; DELETE FROM "${schema}".arbor_migrations WHERE version >= 3`,
    );
    await client.end();
    const upgraded = createPostgresEventLog({ connectionString: PG_URL, schema });
    await expectCompleteRows(upgraded);
    expect(await createSessionRepository({ log: upgraded }).list()).toEqual(truth);
    await expectListMatches(createSessionRepository({ log: upgraded }));
    const session = await createSessionRepository({ log: upgraded }).open("b");
    await session.appendEntry({ type: "message", message: user("after the upgrade", 30_000) });
    await expectCompleteRows(upgraded);
    await expectListMatches(createSessionRepository({ log: upgraded }));
    await upgraded.close();
  });
});

/**
 * SQLite-only behaviour of the event log: the file format and its migrations,
 * refusal of foreign or newer files (left untouched), reopening, group-commit
 * failure, physical deletion and openEventLog.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidArgumentError, LogCommitError, LogSchemaError } from "../../src/core/errors.ts";
import { ARBOR_APPLICATION_ID, LOG_MIGRATIONS, LOG_SCHEMA_VERSION, migrate } from "../../src/store/sqlite/sqlite-schema.ts";
import { createSqliteEventLog, openEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { note, notes, testRegistry } from "./event-log.contract.ts";

const directory = mkdtempSync(join(tmpdir(), "arbor-log-file-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let counter = 0;
const newPath = () => join(directory, `log-${++counter}.db`);

function snapshot(path: string): { bytes: Buffer; mtimeMs: number; siblings: string[] } {
  return {
    bytes: readFileSync(path),
    mtimeMs: statSync(path).mtimeMs,
    siblings: ["-wal", "-shm", "-journal"].filter((suffix) => existsSync(path + suffix)),
  };
}

describe("SQLite event log file", () => {
  it("records its schema version and migrations in the file, in WAL mode", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    await log.append("a", [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }]);
    await log.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma("application_id", { simple: true })).toBe(ARBOR_APPLICATION_ID);
    expect(db.pragma("user_version", { simple: true })).toBe(LOG_SCHEMA_VERSION);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.prepare("SELECT version, name FROM arbor_migrations ORDER BY version").all()).toEqual([
      { version: 1, name: "events-and-streams" },
      { version: 2, name: "session-summaries" },
    ]);
    expect(db.prepare("SELECT stream_id, version, first_position FROM streams").all()).toEqual([{ stream_id: "a", version: 1, first_position: 1 }]);
    db.close();
  });

  it("keeps events, versions and idempotency across reopening", async () => {
    const path = newPath();
    const first = createSqliteEventLog({ path, registry: testRegistry() });
    const original = await first.append("a", [note("x", { eventId: "e1" })]);
    await first.close();
    const second = createSqliteEventLog({ path, registry: testRegistry(), synchronous: "NORMAL" });
    const retry = await second.append("a", [note("x", { eventId: "e1" })], { expectedVersion: "no_stream" });
    expect(retry).toMatchObject({ duplicate: true, lastGlobalPosition: original.lastGlobalPosition });
    const next = await second.append("a", notes(1), { expectedVersion: 1 });
    expect(next.events[0]).toMatchObject({ version: 2, globalPosition: 2 });
    await second.close();
  });

  it("refuses a log from a newer schema version and leaves the file untouched", async () => {
    const path = newPath();
    await createSqliteEventLog({ path }).close();
    const raw = new Database(path);
    raw.pragma("journal_mode = DELETE");
    raw.pragma("user_version = 99");
    raw.close();
    const before = snapshot(path);
    const error = (() => {
      try {
        createSqliteEventLog({ path });
      } catch (caught) {
        return caught;
      }
    })();
    expect(LogSchemaError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/schema version 99, newer than this Arbor's 2/);
    expect(snapshot(path)).toEqual(before);
    expect(() => openEventLog(path)).toThrow(LogSchemaError);
    expect(snapshot(path)).toEqual(before);
  });

  it("migrates an older file to a newer schema all or nothing, and this build then refuses the newer file", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path, registry: testRegistry() });
    await log.append("a", notes(3));
    await log.close();
    const broken = [...LOG_MIGRATIONS, { version: 3, name: "broken", sql: "CREATE INDEX events_by_type ON events (type); CREATE TABLE events (x);" }];
    const working = [...LOG_MIGRATIONS, { version: 3, name: "events-by-type", sql: "CREATE INDEX events_by_type ON events (type, global_position);" }];
    const db = new Database(path);
    expect(() => migrate(db, path, broken)).toThrow(/already exists/);
    expect(db.pragma("user_version", { simple: true })).toBe(2);
    expect(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'events_by_type'").pluck().get()).toBe(0);
    expect(migrate(db, path, working)).toEqual([3]);
    expect(migrate(db, path, working)).toEqual([]);
    expect(db.pragma("user_version", { simple: true })).toBe(3);
    expect(db.prepare("SELECT version, name FROM arbor_migrations ORDER BY version").all()).toEqual([
      { version: 1, name: "events-and-streams" },
      { version: 2, name: "session-summaries" },
      { version: 3, name: "events-by-type" },
    ]);
    expect(db.prepare("SELECT count(*) FROM events").pluck().get()).toBe(3);
    db.close();
    expect(() => createSqliteEventLog({ path })).toThrow(/schema version 3, newer than this Arbor's 2/);
  });

  it("refuses a SQLite database that is not an Arbor log, and a file that is not SQLite, leaving both untouched", () => {
    const foreign = newPath();
    const raw = new Database(foreign);
    raw.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada');");
    raw.close();
    const before = snapshot(foreign);
    expect(() => createSqliteEventLog({ path: foreign })).toThrow(/is a SQLite database but not an Arbor event log/);
    expect(snapshot(foreign)).toEqual(before);

    const text = join(directory, "notes.txt");
    writeFileSync(text, "not a database\n".repeat(20));
    const textBefore = snapshot(text);
    expect(() => createSqliteEventLog({ path: text })).toThrow(/is not a SQLite database/);
    expect(snapshot(text)).toEqual(textBefore);
  });

  it("rejects bad options with InvalidArgumentError", () => {
    expect(() => createSqliteEventLog({ path: newPath(), synchronous: "SOMETIMES" as never })).toThrow(InvalidArgumentError);
    expect(() => createSqliteEventLog({ path: newPath(), busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/);
    expect(() => createSqliteEventLog({ path: newPath(), pollIntervalMs: 0 })).toThrow(/pollIntervalMs/);
    expect(() => createSqliteEventLog({ path: "" })).toThrow(InvalidArgumentError);
    expect(() => createSqliteEventLog({ path: join(directory, "missing-dir", "log.db") })).toThrow(InvalidArgumentError);
    expect(() => createSqliteEventLog({ path: directory })).toThrow(new RegExp(`Could not open "${directory}"`));
  });

  it("commits a tick's appends as one transaction: a failed commit rejects every writer and writes nothing", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path, registry: testRegistry(), busyTimeoutMs: 50 });
    await log.append("a", notes(1));
    const blocker = new Database(path);
    blocker.prepare("BEGIN IMMEDIATE").run();
    const results = await Promise.allSettled([log.append("a", notes(2)), log.append("b", notes(1)), log.deleteStream("a")]);
    blocker.prepare("ROLLBACK").run();
    blocker.close();
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "rejected"]);
    const reasons = results.map((result) => (result as PromiseRejectedResult).reason as Error & { cause?: { code?: string } });
    expect(new Set(reasons).size).toBe(1);
    expect(LogCommitError.isInstance(reasons[0])).toBe(true);
    expect(reasons[0].cause?.code).toBe("SQLITE_BUSY");
    expect((await log.readAll()).map((event) => event.streamId)).toEqual(["a"]);
    await log.append("b", notes(1), { expectedVersion: "no_stream" });
    expect(await log.headPosition()).toBe(2);
    await log.close();
  });

  it("removes a deleted stream's bytes from the file", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path, registry: testRegistry() });
    const marker = "PRIVATE-MARKER-7f3a9c";
    await log.append("secret", [note(`${marker} one`), note(`${marker} two`)]);
    await log.append("kept", [note("kept text")]);
    expect(await log.deleteStream("secret")).toBe(2);
    await log.close();
    const contents = ["", "-wal"].filter((suffix) => existsSync(path + suffix)).map((suffix) => readFileSync(path + suffix).toString("latin1"));
    expect(contents.join("")).not.toContain(marker);
    expect(contents.join("")).toContain("kept text");
  });

  it("openEventLog creates parent directories and opens a SQLite log there", async () => {
    const path = join(directory, "nested", "deeper", "arbor.db");
    const log = openEventLog(path);
    await log.append("a", [{ type: "leaf.moved", data: { leafId: null, fromLeafId: null } }]);
    await log.close();
    expect(existsSync(path)).toBe(true);
    const again = openEventLog(path);
    expect(await again.streamVersion("a")).toBe(1);
    await again.close();
  });
});

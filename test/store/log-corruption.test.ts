/**
 * A SQLite log damaged underneath Arbor: a stored event whose JSON is corrupt is a typed
 * `EventCorruptError` naming the stream and position, never a bare SyntaxError; a log file
 * deleted or replaced while open fails every later commit with `LogFileReplacedError`, and a
 * run whose log file was deleted mid-run ends `failed` saying so (it used to end `done`).
 */
import { copyFileSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ArborError, EventCorruptError, LogFileReplacedError } from "../../src/core/errors.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { fakeModel } from "../machines/helpers.ts";

const directory = mkdtempSync(join(tmpdir(), "arbor-log-corrupt-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let counter = 0;
const newPath = () => join(directory, `log-${++counter}.db`);

describe("a stored event with corrupt JSON", () => {
  it.each(["data", "metadata"] as const)("reading it throws EventCorruptError naming stream, version, position and %s", async (column) => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    await log.append("s-1", [
      { type: "leaf.moved", data: { leafId: null, fromLeafId: null } },
      { type: "leaf.moved", data: { leafId: null, fromLeafId: null } },
    ]);
    await log.close();
    const db = new Database(path);
    db.prepare(`UPDATE events SET ${column} = ? WHERE stream_id = ? AND version = 2`).run('{"leafId": nul', "s-1");
    db.close();

    const reopened = createSqliteEventLog({ path });
    const error = await reopened.readStream("s-1").then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(EventCorruptError);
    expect(ArborError.isInstance(error) && error.code).toBe("EVENT_CORRUPT");
    const corrupt = error as InstanceType<typeof EventCorruptError>;
    expect(corrupt.message).toContain('stream "s-1" version 2');
    expect(corrupt.message).toContain("global position 2");
    expect(corrupt.message).toContain(column);
    expect(corrupt.details).toMatchObject({ streamId: "s-1", version: 2, globalPosition: 2, field: column });
    expect(corrupt.cause).toBeInstanceOf(SyntaxError);
    await expect(reopened.readAll()).rejects.toThrow(EventCorruptError);
    await reopened.close();
  });
});

const leafMoved = { type: "leaf.moved", data: { leafId: null, fromLeafId: null } };
const removeLogFiles = (path: string) => {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
};

describe("the log file deleted or replaced while the log is open", () => {
  it("deleted: the next append rejects with LogFileReplacedError naming the file, and so does every later one", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    await log.append("s-1", [leafMoved]);
    removeLogFiles(path);
    const error = await log.append("s-1", [leafMoved, leafMoved]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LogFileReplacedError);
    expect((error as Error).message).toContain(`"${path}" was deleted`);
    expect((error as Error).message).toMatch(/2 event\(s\) in 1 write\(s\) was NOT written/);
    expect((error as InstanceType<typeof LogFileReplacedError>).details).toMatchObject({ path, reason: "deleted", events: 2 });
    await expect(log.append("s-1", [leafMoved])).rejects.toThrow(LogFileReplacedError);
    await log.close();
  });

  it("replaced by another file: appends reject and the new file is left untouched", async () => {
    const path = newPath();
    const other = newPath();
    const log = createSqliteEventLog({ path });
    await log.append("s-1", [leafMoved]);
    const otherLog = createSqliteEventLog({ path: other });
    await otherLog.append("other", [leafMoved]);
    await otherLog.close();
    // Restored from a backup: the file set is swapped (a WAL left behind would be SQLite's to replay).
    copyFileSync(other, `${other}.copy`);
    removeLogFiles(path);
    renameSync(`${other}.copy`, path);
    const error = await log.append("s-1", [leafMoved]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LogFileReplacedError);
    expect((error as Error).message).toContain("replaced by another file");
    await log.close();
    const reopened = createSqliteEventLog({ path });
    expect((await reopened.listStreams()).map((stream) => stream.streamId)).toEqual(["other"]);
    await reopened.close();
  });

  it("a run whose log file is deleted mid-run ends failed with the reason, not done", async () => {
    const path = newPath();
    const log = createSqliteEventLog({ path });
    const session = await createSessionRepository({ log }).create({ cwd: "/tmp" });
    const vandal = defineTool({
      name: "vandal",
      description: "deletes the log",
      parameters: z.object({}),
      async execute() {
        removeLogFiles(path);
        return { content: [{ type: "text", text: "deleted" }] };
      },
    });
    const model = fakeModel([{ toolCalls: [{ id: "c1", name: "vandal", arguments: {} }] }, { text: "all good" }]);
    const outcome = await createAgent({ session, model, tools: [vandal] }).prompt("go");
    expect(outcome.status).toBe("failed");
    expect(outcome.code).toBe("LOG_FILE_REPLACED");
    expect(outcome.error).toMatch(/was deleted while the log was open.*NOT written/);
    await log.close();
  });
});

/**
 * A SQLite log damaged underneath Arbor: a stored event whose JSON is corrupt is a typed
 * `EventCorruptError` naming the stream and position, never a bare SyntaxError.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ArborError, EventCorruptError } from "../../src/core/errors.ts";
import { createSqliteEventLog } from "../../src/store/sqlite-event-log.ts";

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

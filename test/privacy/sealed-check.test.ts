/**
 * `checkSealedLogData` (`arbor doctor`'s check of sealed data) reaches sealed texts and blobs as well as events: on a real encrypted SQLite file,
 * one bit flipped in a session's sealed head (the session index) is named with its session, and one in a tenant's sealed workspace blob with its
 * tenant and hash; the intact file has no problem, and without the key nothing is reported as checked.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { blobHash } from "../../src/store/workspace/blob-store.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { checkSealedLogData } from "../../src/store/sqlite/sqlite-sealed-check.ts";
import { tempDir } from "../cli/cli-helpers.ts";

const dir = tempDir("arbor-sealed-check-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Flips one bit of a stored value, past the format byte and IV: a `$enc:` base64 text, or raw bytes. */
function flip(path: string, sql: { select: string; update: string }, ...key: unknown[]): void {
  const db = new Database(path);
  try {
    const value = db.prepare(sql.select).pluck().get(...key) as string | Buffer;
    const bytes = Buffer.isBuffer(value) ? Buffer.from(value) : Buffer.from(value.slice("$enc:".length), "base64");
    bytes[20] ^= 0x10;
    db.prepare(sql.update).run(Buffer.isBuffer(value) ? bytes : `$enc:${bytes.toString("base64")}`, ...key);
  } finally {
    db.close();
  }
}

describe("the check of sealed data", () => {
  it("names a damaged session head with its session, and a damaged workspace blob with its tenant and hash", async () => {
    const path = join(dir, "arbor.db");
    const encryption = { key: randomBytes(32) };
    const log = createSqliteEventLog({ path, encryption });
    const repository = createSessionRepository({ log });
    for (const id of ["kept", "hurt"]) await repository.create({ id, cwd: dir, tenant: "acme" });
    const contents = Buffer.from("the file's contents, sealed with the tenant's workspace key\n".repeat(4));
    await log.workspaceBlobs!.put("acme", [{ hash: blobHash(contents), data: contents }]);
    await log.close();

    const intact = await checkSealedLogData(path, encryption);
    expect(intact.problems).toEqual([]);
    expect(intact.sealed).toBeGreaterThanOrEqual(5); // two events, two heads, one blob
    expect(intact.verifiedStreams).toBe(2);
    const keyless = await checkSealedLogData(path, undefined);
    expect(keyless.unverified).toContain("ARBOR_ENCRYPTION_KEY");
    expect(keyless.problems).toEqual([]);

    flip(path, { select: "SELECT state FROM arbor_session_heads WHERE stream_id = ?", update: "UPDATE arbor_session_heads SET state = ? WHERE stream_id = ?" }, "session-hurt");
    flip(path, { select: "SELECT data FROM workspace_blobs WHERE tenant = ?", update: "UPDATE workspace_blobs SET data = ? WHERE tenant = ?" }, "acme");
    const damaged = await checkSealedLogData(path, encryption);
    expect(damaged.problems).toHaveLength(2);
    expect(damaged.problems[0]).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: session "hurt": its stored head \\(session index\\) does not read: .*does not authenticate`));
    expect(damaged.problems[1]).toContain(`${path}: workspace blob ${blobHash(contents)} of tenant "acme": `);
  });
});

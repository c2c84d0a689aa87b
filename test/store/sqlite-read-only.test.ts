/**
 * `createSqliteEventLog({ readOnly: true })` (issue 19 item 11): opening writes nothing, writes are
 * refused with a clear error, a log that would need a migration is refused saying so, and a log in a
 * folder that cannot be written (a read-only bind mount, via bubblewrap, since tests may run as
 * root) is still read. Real SQLite files; a real child process inside bwrap for the mount.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ARBOR_APPLICATION_ID } from "../../src/store/sqlite/sqlite-schema.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { repoRoot } from "../cli/cli-helpers.ts";

const event = { type: "leaf.moved", data: { leafId: null, fromLeafId: null } } as const;

async function makeLog(dir: string): Promise<string> {
  const path = join(dir, "arbor.db");
  const log = createSqliteEventLog({ path });
  await log.append("s-1", [event], { expectedVersion: "no_stream" });
  await log.close();
  return path;
}

describe("a read-only SQLite event log", () => {
  it("reads without changing the file, and refuses appends and deletes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-ro-"));
    const path = await makeLog(dir);
    const before = readFileSync(path);
    const mtime = statSync(path).mtimeMs;
    const log = createSqliteEventLog({ path, readOnly: true });
    expect((await log.readAll()).map((stored) => stored.type)).toEqual(["leaf.moved"]);
    await expect(log.append("s-1", [event])).rejects.toMatchObject({ code: "INVALID_STATE", message: expect.stringContaining("read-only") });
    await expect(log.deleteStream("s-1")).rejects.toMatchObject({ code: "INVALID_STATE" });
    await log.close();
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(statSync(path).mtimeMs).toBe(mtime);
  });

  it("refuses a missing file, a folder and an empty file without creating anything", () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-ro-"));
    expect(() => createSqliteEventLog({ path: join(dir, "none.db"), readOnly: true })).toThrow(/No event log at .*none\.db/);
    expect(() => createSqliteEventLog({ path: dir, readOnly: true })).toThrow(/is a folder/);
    writeFileSync(join(dir, "empty.db"), "");
    expect(() => createSqliteEventLog({ path: join(dir, "empty.db"), readOnly: true })).toThrow(/empty file/);
    expect(readdirSync(dir).sort()).toEqual(["empty.db"]);
  });

  it("says that a log needing a migration must be opened for writing once, and leaves it as it was", () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-ro-"));
    const path = join(dir, "old.db");
    const db = new Database(path);
    db.pragma(`application_id = ${ARBOR_APPLICATION_ID}`);
    db.exec("CREATE TABLE leftover (x)");
    db.close();
    const before = readFileSync(path);
    expect(() => createSqliteEventLog({ path, readOnly: true })).toThrow(/schema version 0.*migrating the file writes it.*Open it once for writing/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("reads a log in a folder mounted read-only (bubblewrap), where a writable open fails", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-ro-"));
    await makeLog(dir);
    const script = join(mkdtempSync(join(tmpdir(), "arbor-ro-script-")), "read.mts");
    writeFileSync(
      script,
      `import { createSqliteEventLog } from ${JSON.stringify(join(repoRoot, "src/store/sqlite/sqlite-event-log.ts"))};
const readOnly = process.argv[2] === "ro";
try {
  const log = createSqliteEventLog({ path: ${JSON.stringify(join(dir, "arbor.db"))}, readOnly });
  console.log(JSON.stringify((await log.readAll()).map((e) => e.type)));
  await log.close();
} catch (error) { console.log("ERROR " + error.message); }
`,
    );
    const run = (mode: string) =>
      spawnSync("/usr/bin/bwrap", ["--ro-bind", "/", "/", "--bind", tmpdir(), tmpdir(), "--ro-bind", dir, dir, "--dev", "/dev", "--proc", "/proc",
        process.execPath, "--import", join(repoRoot, "node_modules/tsx/dist/loader.mjs"), script, mode], { encoding: "utf8" });
    const writable = run("rw");
    expect(writable.stdout, writable.stderr).toMatch(/ERROR/);
    const readOnly = run("ro");
    expect(readOnly.stdout.trim(), readOnly.stderr).toBe('["leaf.moved"]');
    expect(readdirSync(dir)).toEqual(["arbor.db"]);
  });
});

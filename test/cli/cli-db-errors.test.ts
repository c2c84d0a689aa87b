/**
 * `--db` problems are named, not hidden (issue 12 item 8, issue 19 items 11 and 13): `sessions` on a
 * folder or a foreign file exits 2 with the reason (not "No sessions yet"), a `--db` under a file
 * names the file, `--db ''` is refused, and the read-only commands work on a log in a read-only
 * folder (bubblewrap bind mount: the tests may run as root, where chmod does not stop writes).
 * Real CLI processes and real SQLite files.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { sharedPath } from "../shared-dir.ts";

const SAMPLE = sharedPath("oracle/sample-session.jsonl");

describe("--db errors", { timeout: 120_000 }, () => {
  it("a missing log names where it was looked for: the --db path, not the default", async () => {
    const dir = tempDir();
    const sessions = await runArbor(["--db", join(dir, "new.db"), "sessions"], { cwd: dir });
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toContain("No sessions yet (no Arbor log at the --db path)");
    expect(sessions.stdout).not.toContain("the default is");
    const tree = await runArbor(["--db", join(dir, "new.db"), "tree", "latest"], { cwd: dir });
    expect(tree.stderr).toContain(`No Arbor database at ${join(dir, "new.db")} yet (given with --db)`);
  });

  it("sessions on a folder or a non-Arbor file exits 2 and says what is wrong", async () => {
    const dir = tempDir();
    for (const json of [[], ["--json"]]) {
      const folder = await runArbor(["--db", dir, "sessions", ...json]);
      expect(folder.code).toBe(2);
      expect(folder.stdout).toBe("");
      expect(folder.stderr).toContain(`${dir} is a folder, not a log file`);
    }
    writeFileSync(join(dir, "notes.txt"), "not a database\n");
    const foreign = await runArbor(["--db", join(dir, "notes.txt"), "sessions", "--json"]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/is not a SQLite database/);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("not a database\n");
    // No log at all is the one "no sessions" case.
    const none = await runArbor(["--db", join(dir, "none.db"), "sessions", "--json"]);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual([]);
  });

  it("a --db under a file names the file; an empty --db is refused", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "plain"), "x");
    for (const command of [["sessions"], ["run", "--model", "openai:gpt-test", "hi"], ["import", SAMPLE]]) {
      const result = await runArbor(["--db", join(dir, "plain", "arbor.db"), ...command], { env: { OPENAI_API_KEY: "k" } });
      expect(result.code, command.join(" ")).toBe(2);
      expect(result.stderr).toContain(`${join(dir, "plain")} is a file, not a folder`);
      expect(result.stderr).not.toMatch(/EEXIST|ENOTDIR/);
    }
    const empty = await runArbor(["--db", "", "sessions"], { cwd: dir });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/--db is empty/);
    expect(readdirSync(dir)).toEqual(["plain"]);
  });

  it("sessions, tree, context, events and export read a log in a read-only folder", async () => {
    const dir = tempDir();
    const logDir = join(dir, "logs");
    mkdirSync(logDir);
    const db = join(logDir, "arbor.db");
    const imported = await runArbor(["--db", db, "import", SAMPLE]);
    expect(imported.code, imported.stderr).toBe(0);
    const sessionId = imported.stdout.trim().split("\n")[0];
    const before = readFileSync(db);
    const wrapper = ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--bind", tmpdir(), tmpdir(), "--ro-bind", logDir, logDir, "--dev", "/dev", "--proc", "/proc"];
    const sessions = await runArbor(["--db", db, "sessions", "--json"], { wrapper });
    expect(sessions.code, sessions.stderr).toBe(0);
    expect((JSON.parse(sessions.stdout) as { id: string }[]).map((session) => session.id)).toEqual([sessionId]);
    for (const command of [["tree", sessionId], ["context", sessionId, "--json"], ["events", sessionId], ["export", sessionId]]) {
      const result = await runArbor(["--db", db, ...command], { wrapper });
      expect(result.code, `${command[0]}: ${result.stderr}`).toBe(0);
      expect(result.stderr).not.toMatch(/readonly database/);
      expect(result.stdout.length).toBeGreaterThan(0);
    }
    expect(readFileSync(db).equals(before)).toBe(true);
  });
});

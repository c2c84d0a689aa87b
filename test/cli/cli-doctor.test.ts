/**
 * `arbor doctor`: the real CLI process checks a real SQLite log file. An intact file is `ok`
 * (exit 0); garbage written into its data pages, whether it breaks an event's JSON or the
 * b-tree itself, is reported naming the file (exit 1), never answered as if nothing were wrong.
 * So is a lost event: a stored stream missing a version that the delete retention of deltas
 * cannot have removed, while the deltas it did remove are no damage. A path that is not an Arbor
 * log (missing, a folder, an empty file, another file or SQLite database, a newer log) is not
 * damage: it is named as what it is, exit 2, and left untouched.
 */
import { mkdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

const MARKER = "doctor-marker-text-9f2c";

async function makeLog(path: string): Promise<void> {
  const log = createSqliteEventLog({ path });
  const repository = createSessionRepository({ log });
  for (let index = 0; index < 40; index++) {
    const session = await repository.create({ id: `s-${index}`, cwd: "/tmp" });
    await session.appendEntry({ type: "message", message: { role: "user", content: [{ type: "text", text: `${MARKER} ${index} ${"padding ".repeat(60)}` }], timestamp: 1_000 + index } });
  }
  await log.close();
}

describe("arbor doctor", () => {
  it("passes an intact file and names the file when garbage was written into its pages", async () => {
    const dir = tempDir();
    const good = join(dir, "good.db");
    await makeLog(good);
    const ok = await runArbor(["--db", good, "doctor"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^ok ${good.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(\\d+ events\\)`));

    // Garbage inside one event's JSON text.
    const jsonDamaged = join(dir, "json-damaged.db");
    copyFileSync(good, jsonDamaged);
    const bytes = readFileSync(jsonDamaged);
    const at = bytes.indexOf(Buffer.from(`${MARKER} 7 `));
    expect(at).toBeGreaterThan(0);
    bytes.write('\u0001"}]{garbage', at - 12, "latin1");
    writeFileSync(jsonDamaged, bytes);
    const json = await runArbor(["--db", jsonDamaged, "doctor"]);
    expect(json.code).toBe(1);
    expect(json.stderr).toContain(`${jsonDamaged}: The stored event at stream "session-s-7"`);
    expect(json.stderr).toContain(`damaged: ${jsonDamaged}`);

    // Garbage over whole pages in the middle of the file.
    const pagesDamaged = join(dir, "pages-damaged.db");
    copyFileSync(good, pagesDamaged);
    const pages = readFileSync(pagesDamaged);
    const pageSize = pages.readUInt16BE(16) === 1 ? 65_536 : pages.readUInt16BE(16);
    let seed = 7;
    for (let offset = pageSize * 3; offset < Math.min(pages.length, pageSize * 6); offset++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      pages[offset] = seed & 0xff;
    }
    writeFileSync(pagesDamaged, pages);
    const broken = await runArbor(["--db", pagesDamaged, "doctor"]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`damaged: ${pagesDamaged}`);
    expect(broken.stderr).toContain(`${pagesDamaged}: `);
  }, 120_000);

  it("names the stream and version of a lost event, and passes the deltas the delete retention removed", async () => {
    const dir = tempDir();
    const path = join(dir, "retained.db");
    const server = await startOpenAIServer();
    try {
      server.script(
        toolCallResponse([{ id: "call_read", name: "read", arguments: { path: "missing.txt" } }], { text: "Reading it first.", delayMs: 1 }),
        textResponse("the answer, word by word", { delayMs: 1 }),
      );
      const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
      const log = createSqliteEventLog({ path, retention: { endedMessageDeltas: "delete" } });
      const harness = await createHarness({ eventLog: log, models: { main: model }, cwd: dir });
      expect((await harness.prompt("read it, then answer")).status).toBe("done");
      await harness.close();
      await log.close();
    } finally {
      await server.close();
    }
    const rows = (sql: string, file = path) => {
      const db = new Database(file, { readonly: true });
      try {
        return db.prepare(sql).all() as { streamId: string; version: number; type: string; role: string | null }[];
      } finally {
        db.close();
      }
    };
    const stream = rows(`SELECT stream_id AS streamId, version, type, json_extract(data, '$.entry.message.role') AS role FROM events ORDER BY global_position`);
    expect(stream.filter((row) => row.type === "message.delta")).toEqual([]);
    const ok = await runArbor(["--db", path, "doctor"]);
    expect(ok.code, ok.stderr).toBe(0);

    // Each lost entry: one outside any message, one inside the user message's span, the assistant's own inside its span of deleted deltas.
    const entries = stream.filter((row) => row.type === "entry.appended");
    const lost = [entries.find((row) => row.role === null)!, entries.find((row) => row.role === "user")!, entries.find((row) => row.role === "assistant")!];
    for (const [index, row] of lost.entries()) {
      const damaged = join(dir, `lost-${index}.db`);
      copyFileSync(path, damaged);
      const db = new Database(damaged);
      expect(db.prepare("DELETE FROM events WHERE stream_id = ? AND version = ?").run(row.streamId, row.version).changes).toBe(1);
      db.close();
      const doctor = await runArbor(["--db", damaged, "doctor"]);
      expect(doctor.code, doctor.stdout).toBe(1);
      expect(doctor.stderr).toMatch(new RegExp(`${damaged.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: stream "${row.streamId}" is missing versions? (\\d+-)?${row.version}\\b`));
      expect(doctor.stderr).toContain(`damaged: ${damaged}`);
    }
  }, 120_000);

  it("names a path that is not an Arbor log as what it is, exit 2, never as damage, and leaves it untouched", async () => {
    const dir = tempDir();
    const other = join(dir, "other.db");
    const db = new Database(other);
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')");
    db.close();
    const text = join(dir, "notes.txt");
    writeFileSync(text, "not a database at all\n");
    const empty = join(dir, "empty.db");
    writeFileSync(empty, "");
    const emptySqlite = join(dir, "empty-sqlite.db");
    const blank = new Database(emptySqlite);
    blank.exec("CREATE TABLE t (x); DROP TABLE t");
    blank.close();
    const newer = join(dir, "newer.db");
    await makeLog(newer);
    const raw = new Database(newer);
    raw.pragma("user_version = 99");
    raw.close();
    const folder = join(dir, "folder");
    mkdirSync(folder);
    const cases: Array<[string, RegExp]> = [
      [other, /is a SQLite database but not an Arbor event log/],
      [text, /is not a SQLite database, so it is not an Arbor event log/],
      [empty, /is an empty file, not an Arbor event log/],
      [emptySqlite, /is an empty SQLite database, not yet an Arbor event log/],
      [newer, /schema version 99, newer than this Arbor's/],
      [folder, /is a folder, not a log file/],
      [join(dir, "missing.db"), /No Arbor database at .*missing\.db: there is nothing to check/],
    ];
    for (const [path, message] of cases) {
      const before = path === folder || path.endsWith("missing.db") ? undefined : readFileSync(path);
      const doctor = await runArbor(["--db", path, "doctor"]);
      expect(doctor.code, `${path}: ${doctor.stderr}`).toBe(2);
      expect(doctor.stderr).toMatch(message);
      expect(doctor.stderr).not.toContain("damaged");
      expect(doctor.stderr).not.toContain("Restore it from a backup");
      expect(doctor.stdout).toBe("");
      if (before) expect(readFileSync(path).equals(before), path).toBe(true);
    }
  }, 120_000);
});

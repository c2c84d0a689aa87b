/**
 * `arbor doctor`: the real CLI process checks a real SQLite log file. An intact file is `ok`
 * (exit 0); garbage written into its data pages, whether it breaks an event's JSON or the
 * b-tree itself, is reported naming the file (exit 1), never answered as if nothing were wrong.
 */
import { readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
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
});

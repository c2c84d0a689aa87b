/**
 * Issue 19 finding 13, the rest: `arbor import` reports unknown entry kinds (as its contract says),
 * and non-JSON values under unknown keys of built-in events are refused, naming the path, instead
 * of being dropped or rewritten by JSON.stringify. A real SQLite file and a real `arbor` process.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EventSchemaError } from "../../src/core/errors.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";

describe("arbor import", { timeout: 120_000 }, () => {
  it("reports each unknown entry kind, with its lines, and keeps the entries for export", async () => {
    const dir = tempDir("arbor-import-");
    const file = join(dir, "s.jsonl");
    const lines = [
      { type: "session", version: 3, id: "019b7a00-0000-7000-8000-0000000000aa", timestamp: "2026-01-01T00:00:00.000Z", cwd: dir },
      { type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "hi", timestamp: 1 } },
      { type: "bookmark_v9", id: "a2", parentId: "a1", timestamp: "2026-01-01T00:00:02.000Z", note: "x" },
      { type: "bookmark_v9", id: "a3", parentId: "a2", timestamp: "2026-01-01T00:00:03.000Z", note: "y" },
      { type: "hologram", id: "a4", parentId: "a3", timestamp: "2026-01-01T00:00:04.000Z" },
    ];
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
    const db = join(dir, "arbor.db");
    const result = await runArbor(["--db", db, "import", file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('2 entries of unknown kind "bookmark_v9" (lines 3, 4) kept and exported as they are, but not applied to the context.');
    expect(result.stderr).toContain('1 entry of unknown kind "hologram" (line 5)');
    const json = await runArbor(["--db", db, "import", file, "--json"]);
    const diagnostics = (JSON.parse(json.stdout) as { diagnostics: { kind: string; line: number }[] }).diagnostics.filter((item) => item.kind === "unknown_entry");
    expect(diagnostics.map((item) => item.line)).toEqual([3, 5]);
    const exported = await runArbor(["--db", db, "export", JSON.parse(json.stdout).sessionId]);
    expect(exported.stdout).toContain('"type":"bookmark_v9"');
    expect(readFileSync(file, "utf8")).toBe(lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
  });
});

describe("non-JSON values in built-in events", () => {
  it("are refused, naming the path, and nothing is appended", async () => {
    const path = join(tempDir("arbor-json-"), "arbor.db");
    const log = createSqliteEventLog({ path });
    try {
      const base = { leafId: null, fromLeafId: null };
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["a function", { ...base, extra: () => 1 }, /data\.extra is a function/],
        ["a Date", { ...base, when: new Date(0) }, /data\.when is a Date \(not a plain object\)/],
        ["NaN", { ...base, nested: { score: Number.NaN } }, /data\.nested\.score is the number NaN/],
        ["Infinity", { ...base, list: [1, Number.POSITIVE_INFINITY] }, /data\.list\[1\] is the number Infinity/],
        ["a Map", { ...base, map: new Map([["a", 1]]) }, /data\.map is a Map/],
        ["undefined in an array", { ...base, list: [1, undefined] }, /data\.list\[1\] is undefined/],
        ["a symbol", { ...base, tag: Symbol("x") }, /data\.tag is a symbol/],
      ];
      for (const [name, data, message] of cases) {
        const error = await log.append("s", [{ type: "leaf.moved", data }]).catch((caught: unknown) => caught);
        expect(EventSchemaError.isInstance(error), name).toBe(true);
        expect((error as Error).message, name).toMatch(message);
        expect((error as Error).message).toContain('("leaf.moved")');
      }
      const metadataError = await log.append("s", [{ type: "leaf.moved", data: base, metadata: { at: new Date(0) } }]).catch((caught: unknown) => caught);
      expect((metadataError as Error).message).toMatch(/metadata\.at is a Date/);
      expect(await log.streamVersion("s")).toBe(0);

      // JSON values under unknown keys are accepted (this schema then strips them, as it says); an
      // undefined property is an absent field.
      await log.append("s", [{ type: "leaf.moved", data: { ...base, extra: { n: 1, list: ["a", null, true] }, gone: undefined } }]);
      const [stored] = await log.readStream("s");
      expect(stored.data).toEqual(base);
    } finally {
      await log.close();
    }
  });
});

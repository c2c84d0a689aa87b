/**
 * Imported pi sessions are honest in `arbor sessions`: token totals come from the imported
 * messages' usage (pi v1 usage has no `totalTokens`), and a session's "changed" time and place
 * in the list are its own latest entry's, not the import's.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runArbor, tempDir } from "./cli-helpers.ts";

/** A pi v1 session file (no version field, no entry ids) whose messages are from `day`. */
function piV1Session(path: string, day: string, text: string): void {
  const usage = { input: 3, output: 191, cacheRead: 100, cacheWrite: 1684, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.01 } };
  const lines = [
    { type: "session", id: `id-${day}`, timestamp: `${day}T10:00:00.000Z`, cwd: "/tmp", provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "off" },
    { type: "message", timestamp: `${day}T10:00:01.000Z`, message: { role: "user", content: [{ type: "text", text }], timestamp: Date.parse(`${day}T10:00:01.000Z`) } },
    { type: "message", timestamp: `${day}T10:00:05.000Z`, message: { role: "assistant", content: [{ type: "text", text: "ok" }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "stop", timestamp: Date.parse(`${day}T10:00:05.000Z`) } },
  ];
  writeFileSync(path, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
}

describe("arbor import", { timeout: 120_000 }, () => {
  it("shows the imported usage's token total and sorts by the session's own time", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    piV1Session(join(dir, "newer.jsonl"), "2025-11-21", "the newer session");
    piV1Session(join(dir, "older.jsonl"), "2025-01-05", "the older session");
    // The newer session is imported first: an import-time order would list the older one first.
    expect((await runArbor(["--db", db, "import", join(dir, "newer.jsonl")])).code).toBe(0);
    expect((await runArbor(["--db", db, "import", join(dir, "older.jsonl")])).code).toBe(0);
    const listed = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { firstMessage: string; updatedAt: string; tokens: { total: number | null } }[];
    expect(listed.map((row) => row.firstMessage)).toEqual(["the newer session", "the older session"]);
    expect(listed[0].updatedAt).toBe("2025-11-21T10:00:05.000Z");
    expect(listed[0].tokens.total).toBe(3 + 191 + 100 + 1684);
    const text = (await runArbor(["--db", db, "sessions"])).stdout;
    expect(text).toContain("changed 2025-11-21T10:00:05.000Z");
    expect(text).toContain("1,978 tokens (100 cached)");
    expect(text).not.toContain("? tokens");
  });
});

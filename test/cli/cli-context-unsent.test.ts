/**
 * `arbor context` prints the session's context; an aborted or failed assistant reply stays in it, but the model adapters leave it out of every
 * request. The text output marks such a reply as not sent, so "what the model would see" is not misread.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runArbor, tempDir } from "./cli-helpers.ts";

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (text: string, stopReason: string, timestamp: number) => ({ role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "openai", model: "gpt-test", usage, stopReason, timestamp });
const lines = [
  { type: "session", version: 3, id: "019b7a00-0000-7000-8000-0000000000c1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/demo" },
  { type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text: "first question" }], timestamp: 1767225601000 } },
  { type: "message", id: "a1", parentId: "u1", timestamp: "2026-01-01T00:00:02.000Z", message: assistant("half an ans", "aborted", 1767225602000) },
  { type: "message", id: "u2", parentId: "a1", timestamp: "2026-01-01T00:00:03.000Z", message: { role: "user", content: [{ type: "text", text: "again" }], timestamp: 1767225603000 } },
  { type: "message", id: "a2", parentId: "u2", timestamp: "2026-01-01T00:00:04.000Z", message: assistant("the whole answer", "stop", 1767225604000) },
];

describe("arbor context", { timeout: 60_000 }, () => {
  it("marks an aborted reply as not sent to the model, and prints the others as they are", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const file = join(dir, "session.jsonl");
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
    const imported = await runArbor(["--db", db, "import", file, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const { sessionId } = JSON.parse(imported.stdout) as { sessionId: string };
    const context = await runArbor(["--db", db, "context", sessionId]);
    expect(context.code, context.stderr).toBe(0);
    expect(context.stdout.split("\n").filter((line) => line.startsWith("["))).toEqual([
      "[user] first question",
      "[assistant (aborted: not sent to the model)] half an ans",
      "[user] again",
      "[assistant] the whole answer",
    ]);
  });
});

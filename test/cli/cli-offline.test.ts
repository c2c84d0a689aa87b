/**
 * End-to-end tests of the model-free CLI commands on a real SQLite file, through
 * the real `arbor` binary: import, sessions, tree, context, export (read back by
 * pi), fork, label, rm, events, and clear errors for bad references.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSessionContext, migrateSessionEntries, parseSessionEntries } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { sharedPath } from "../shared-dir.ts";

const sharedSample = sharedPath("oracle/sample-session.jsonl");

function piContexts(jsonl: string) {
  const entries = parseSessionEntries(jsonl) as { type: string; id: string; parentId: string | null }[];
  migrateSessionEntries(entries as never);
  const body = entries.filter((entry) => entry.type !== "session");
  return { body, context: (leafId?: string) => buildSessionContext(body as never, leafId) };
}

describe("arbor CLI without a model", { timeout: 180_000 }, () => {
  it("imports a pi session, shows it, and exports it so that pi sees the same context for every leaf", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const before = statSync(sharedSample).mtimeMs;
    const imported = await runArbor(["--db", db, "import", sharedSample, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const { sessionId } = JSON.parse(imported.stdout) as { sessionId: string };
    expect(statSync(sharedSample).mtimeMs).toBe(before);

    const sessions = await runArbor(["--db", db, "sessions", "--json"]);
    expect(JSON.parse(sessions.stdout).map((row: { id: string }) => row.id)).toEqual([sessionId]);

    const tree = await runArbor(["--db", db, "tree", sessionId.slice(0, 12)]);
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toMatch(/^\* .*i0000001/m); // the leaf is marked
    expect(tree.stdout).toContain('[start]'); // the label on u0000001
    expect(tree.stdout).toContain("compaction");

    const exported = await runArbor(["--db", db, "export", sessionId]);
    expect(exported.code, exported.stderr).toBe(0);
    const pi = piContexts(exported.stdout);
    const parents = new Set(pi.body.map((entry) => entry.parentId));
    const leaves = pi.body.filter((entry) => !parents.has(entry.id)).map((entry) => entry.id);
    expect(leaves.length).toBeGreaterThan(1);
    for (const leaf of leaves) {
      const ours = await runArbor(["--db", db, "context", sessionId, "--leaf", leaf, "--json"]);
      expect(ours.code, ours.stderr).toBe(0);
      const parsed = JSON.parse(ours.stdout);
      const theirs = pi.context(leaf);
      expect(parsed.messages).toEqual(JSON.parse(JSON.stringify(theirs.messages)));
      expect(parsed.thinkingLevel).toBe(theirs.thinkingLevel);
      expect(parsed.model).toEqual(theirs.model);
    }
    // pi opens the exported file on the same leaf as ours (the leaf is written last).
    const current = JSON.parse((await runArbor(["--db", db, "context", sessionId, "--json"])).stdout);
    expect(current.messages).toEqual(JSON.parse(JSON.stringify(pi.context().messages)));
  });

  it("forks, labels and removes sessions; events are listed with positions", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const { stdout } = await runArbor(["--db", db, "import", sharedSample]);
    const sessionId = stdout.trim().split("\n")[0];

    const fork = await runArbor(["--db", db, "fork", sessionId, "--at", "a0000002"]);
    expect(fork.code, fork.stderr).toBe(0);
    const forkId = fork.stdout.trim();
    // `latest` is the session appended to most recently: the fresh fork, not the original.
    expect((await runArbor(["--db", db, "tree", "latest"])).stdout.split("\n")[0]).toContain(forkId);
    expect(JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout)[0].id).toBe(forkId); // same order as latest
    const forkContext = JSON.parse((await runArbor(["--db", db, "context", forkId, "--json"])).stdout);
    expect(forkContext.messages.map((message: { role: string }) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    const listed = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout);
    expect(listed.find((row: { id: string }) => row.id === forkId).parentSessionId).toBe(sessionId);

    const label = await runArbor(["--db", db, "label", forkId, "u0000001", "first ask"]);
    expect(label.code, label.stderr).toBe(0);
    expect((await runArbor(["--db", db, "tree", forkId])).stdout).toContain("[first ask]");

    const events = await runArbor(["--db", db, "events", forkId, "--json"]);
    const lines = events.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines[0].type).toBe("session.created");
    expect(lines.at(-1).type).toBe("entry.appended");
    const positions = lines.map((event: { globalPosition: number }) => event.globalPosition);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);

    const removed = await runArbor(["--db", db, "rm", forkId]);
    expect(removed.code, removed.stderr).toBe(0);
    const after = await runArbor(["--db", db, "tree", forkId]);
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(/No session/);
  });

  it("events --follow tails appends made by another process, from --from", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const sessionId = (await runArbor(["--db", db, "import", sharedSample])).stdout.trim().split("\n")[0];
    const all = (await runArbor(["--db", db, "events", sessionId, "--json"])).stdout.trim().split("\n").map((line) => JSON.parse(line));
    const from = all.at(-2).globalPosition;
    let output = "";
    let follower: import("node:child_process").ChildProcess | undefined;
    const following = runArbor(["--db", db, "events", sessionId, "--follow", "--json", "--from", String(from)], {
      onSpawn: (child) => {
        follower = child;
        child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      },
    });
    for (let attempt = 0; attempt < 400 && !output.includes("\n"); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    const label = await runArbor(["--db", db, "label", sessionId, "u0000001", "followed"]);
    expect(label.code, label.stderr).toBe(0);
    for (let attempt = 0; attempt < 400 && !output.includes('"followed"'); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    follower!.kill("SIGINT");
    const result = await following;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines[0].globalPosition).toBe(from + 1); // starts right after --from: no gap, no repeat
    expect(lines.at(-1).data.entry.label).toBe("followed");
  });

  it("gives one clear line for bad input and never overwrites files", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    const corrupt = join(dir, "corrupt.jsonl");
    writeFileSync(corrupt, "this is not a header\n{\"type\":\"message\"}\n");
    const bytes = readFileSync(corrupt);
    const result = await runArbor(["--db", db, "import", corrupt]);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/header/i);
    expect(readFileSync(corrupt)).toEqual(bytes);

    const { stdout } = await runArbor(["--db", db, "import", sharedSample]);
    const target = join(dir, "out.jsonl");
    writeFileSync(target, "keep me");
    const refused = await runArbor(["--db", db, "export", stdout.trim(), "-o", target]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--force/);
    expect(readFileSync(target, "utf8")).toBe("keep me");

    const missing = join(dir, "nowhere", "arbor.db");
    const noDb = await runArbor(["--db", missing, "tree", "latest"]);
    expect(noDb.code).toBe(1);
    expect(noDb.stderr).toMatch(/No Arbor database/);
    expect(existsSync(join(dir, "nowhere"))).toBe(false); // reading never creates files

    const unknown = await runArbor(["--db", db, "context", "zzzz"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No session "zzzz"/);
  });
});

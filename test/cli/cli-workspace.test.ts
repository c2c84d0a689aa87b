/**
 * The workspace from the CLI: `arbor run --checkpoints` records the files; `arbor workspace diff`
 * shows what a restore would change; `checkout --files` puts them back and saves the user's
 * unrecorded edit first (and says how to get it back); `workspace export` writes a recorded tree;
 * `fork --files`; `arbor rm` of every session removes their blobs. Real CLI processes, a real
 * SQLite file, the loopback OpenAI-wire server.
 */
import { mkdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;
let work: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
  work = join(dir, "work");
  mkdirSync(work);
});
afterEach(async () => {
  await server.close();
});

const env = { OPENAI_API_KEY: "test-key" };

async function entriesOf(sessionId: string): Promise<{ id: string; role?: string; type: string; customType?: string }[]> {
  const log = createSqliteEventLog({ path: db, readOnly: true });
  try {
    const events = await log.readStream(`session-${sessionId}`);
    return events
      .filter((event) => event.type === "entry.appended")
      .map((event) => {
        const entry = (event.data as { entry: { id: string; type: string; customType?: string; message?: { role: string } } }).entry;
        return { id: entry.id, type: entry.type, role: entry.message?.role, customType: entry.customType };
      });
  } finally {
    await log.close();
  }
}

describe("arbor workspace, checkout --files, fork --files", { timeout: 600_000 }, () => {
  it("records, diffs, restores (saving the user's edit first), exports and forks the files; rm removes the blobs", async () => {
    writeFileSync(join(work, "notes.txt"), "alpha\nbeta\n");
    server.script(
      toolCallResponse([{ id: "call_write", name: "write", arguments: { path: "src/hello.txt", content: "hello world\n" } }]),
      toolCallResponse([{ id: "call_edit", name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "beta", newText: "gamma" }] } }]),
      textResponse("Done."),
    );
    const run = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", work, "--checkpoints", "make the changes"], { env });
    expect(run.code, run.stderr).toBe(0);
    const sessions = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string }[];
    const id = sessions[0].id;
    const entries = await entriesOf(id);
    const user = entries.find((entry) => entry.role === "user")!;
    const results = entries.filter((entry) => entry.role === "toolResult");

    // The user edits the file after the run.
    writeFileSync(join(work, "notes.txt"), "my own edit\n");
    const diff = await runArbor(["--db", db, "workspace", "diff", id, "--at", user.id]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout.trim().split("\n").sort()).toEqual(["D src", "D src/hello.txt", "M notes.txt"].sort());

    // checkout a user message: the leaf goes to its parent, the files to the tree there.
    const checkout = await runArbor(["--db", db, "checkout", id, user.id, "--files"]);
    expect(checkout.code, checkout.stderr).toBe(0);
    expect(checkout.stdout).toMatch(/files: \d+ path\(s\) restored/);
    expect(checkout.stdout).toContain("saved first");
    expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(existsSync(join(work, "src"))).toBe(false);
    const savedAt = /at entry (\S+) \(/.exec(checkout.stdout)![1];
    expect((await entriesOf(id)).find((entry) => entry.id === savedAt)).toMatchObject({ type: "custom", customType: "arbor.workspace" });

    // The saved edit can be exported (and restored): nothing was lost.
    const out = join(dir, "out");
    const exported = await runArbor(["--db", db, "workspace", "export", id, out, "--at", savedAt]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe("my own edit\n");
    expect(readFileSync(join(out, "src", "hello.txt"), "utf8")).toBe("hello world\n");

    // fork at the last result, with its files.
    const fork = await runArbor(["--db", db, "fork", id, "--at", results[1].id, "--files"]);
    expect(fork.code, fork.stderr).toBe(0);
    const forkId = fork.stdout.split("\n")[0].trim();
    expect(fork.stdout).toMatch(/files: \d+ path\(s\) restored/);
    expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
    expect(readFileSync(join(work, "src", "hello.txt"), "utf8")).toBe("hello world\n");
    expect((await runArbor(["--db", db, "workspace", "diff", forkId])).stdout).toBe("");

    // A session that recorded no files refuses --files and changes nothing.
    server.script(textResponse("hi"));
    const plain = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", work, "hello"], { env });
    expect(plain.code, plain.stderr).toBe(0);
    const plainId = (JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string }[])[0].id;
    const refused = await runArbor(["--db", db, "checkout", plainId, (await entriesOf(plainId))[0].id, "--files"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("recorded no files");

    // Deleting every session that referenced the blobs removes them.
    const blobCount = () => {
      const sqlite = new Database(db, { readonly: true });
      try {
        return (sqlite.prepare("SELECT count(*) AS n FROM workspace_blobs").get() as { n: number }).n;
      } finally {
        sqlite.close();
      }
    };
    expect(blobCount()).toBeGreaterThan(0);
    expect((await runArbor(["--db", db, "rm", forkId, "--yes"])).code).toBe(0);
    expect(blobCount()).toBeGreaterThan(0);
    expect((await runArbor(["--db", db, "rm", id, "--yes"])).code).toBe(0);
    expect(blobCount()).toBe(0);
  });
});

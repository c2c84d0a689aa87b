/**
 * `arbor replay`: a run made by the real CLI (real HTTP from @ai-sdk/openai to a loopback
 * OpenAI-wire server, a real SQLite file) is replayed from the log: "identical" with the
 * recorded tool results; with `--live-tools` after the file it read changed, the first divergent
 * request and what differs. The log is only read.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";

let server: OpenAIServer;
let dir: string;
let db: string;

beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
  writeFileSync(join(dir, "notes.txt"), "some notes\n");
});
afterEach(async () => {
  await server.close();
});

const arbor = (args: string[]) => runArbor(["--db", db, ...args], { env: { OPENAI_API_KEY: "test-key" } });

describe("arbor replay", () => {
  it("prints identical for the logged run, and the divergence once the file the tool read changed", async () => {
    server.script(toolCallResponse([{ id: "call_read", name: "read", arguments: { path: "notes.txt" } }]), textResponse("The notes say: some notes"));
    const run = await arbor(["run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "read notes.txt"]);
    expect(run.code, run.stderr).toBe(0);
    const before = readFileSync(db);

    const same = await arbor(["replay", "latest"]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout.trim()).toBe("identical (2 model calls)");

    // The recorded results do not change with the file; the live tool does.
    writeFileSync(join(dir, "notes.txt"), "other notes\n");
    const changed = await arbor(["replay", "latest", "--live-tools", "--json"]);
    expect(changed.code, changed.stderr).toBe(1);
    const report = JSON.parse(changed.stdout);
    expect(report.identical).toBe(false);
    expect(report.divergence).toMatchObject({ request: 2, kind: "message" });
    expect(report.divergence.recorded).toContain("some notes");
    expect(report.divergence.actual).toContain("other notes");
    const text = await arbor(["replay", "latest", "--live-tools"]);
    expect(text.stdout).toMatch(/^diverged: request 2 differs at part \d+: recorded "tool result read: .*some notes.*", now "tool result read: .*other notes.*"/);
    // No replay wrote to the log; no extra provider request was made.
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(statSync(db).size).toBe(before.length);
    expect(server.requests).toHaveLength(2);
  }, 240_000);

  it("names an unknown run (exit 1)", async () => {
    server.script(textResponse("hi"));
    expect((await arbor(["run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "hello"])).code).toBe(0);
    const missing = await arbor(["replay", "latest", "--run", "run-nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/has no run run-nope \(its runs: [0-9a-f-]+\)/);
  }, 120_000);
});

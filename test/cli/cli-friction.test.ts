/**
 * CLI friction a new user hits (issue 12 item 8 and the new-user trial): short session ids,
 * chat's /help and unknown /commands, answers on their own lines, compact --keep-recent,
 * rm asking on a terminal, sessions showing the time it sorts by, and a bare --model refused.
 * Real CLI processes (a real pseudo-terminal through util-linux `script` for rm), real SQLite
 * files, the loopback OpenAI-wire server.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { sharedPath } from "../shared-dir.ts";

const SAMPLE = sharedPath("oracle/sample-session.jsonl");
const env = { OPENAI_API_KEY: "test-key" };

let server: OpenAIServer;
let dir: string;
let db: string;
beforeEach(async () => {
  server = await startOpenAIServer();
  dir = tempDir();
  db = join(dir, "arbor.db");
});
afterEach(async () => {
  await server.close();
});

const model = () => ["--base-url", server.url, "--model", "openai:gpt-test"];

async function importSample(): Promise<string> {
  const result = await runArbor(["--db", db, "import", SAMPLE]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim().split("\n")[0];
}

describe("CLI friction", { timeout: 180_000 }, () => {
  it("sessions shows a unique short id (the id's tail) and the time it sorts by; commands accept the short id", async () => {
    const first = await importSample();
    const second = await importSample();
    // UUIDv7 ids made within a minute share their first 8 characters: that prefix is ambiguous.
    expect(first.slice(0, 8)).toBe(second.slice(0, 8));
    const ambiguous = await runArbor(["--db", db, "tree", first.slice(0, 8)]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/ambiguous/);
    await runArbor(["--db", db, "label", first, "u0000001", "touched"]);
    const listed = await runArbor(["--db", db, "sessions"]);
    const lines = listed.stdout.trim().split("\n");
    const shortOf = (id: string) => id.replace(/-/g, "").slice(-8);
    expect(lines[0].startsWith(`${shortOf(first)}  ${first}`)).toBe(true); // changed last: first
    expect(lines[1].startsWith(`${shortOf(second)}  ${second}`)).toBe(true);
    const json = JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout) as { id: string; updatedAt: string }[];
    expect(json.map((session) => session.id)).toEqual([first, second]);
    expect(json[0].updatedAt >= json[1].updatedAt).toBe(true);
    expect(lines[0]).toContain(`changed ${json[0].updatedAt}`);
    for (const id of [first, second]) {
      const tree = await runArbor(["--db", db, "tree", shortOf(id)]);
      expect(tree.code, tree.stderr).toBe(0);
      expect(tree.stdout.split("\n")[0]).toContain(id);
    }
  });

  it("chat: /help lists the commands, an unknown /command is never sent, answers end their lines, no prompt on a pipe", async () => {
    server.script(textResponse("first answer", { delayMs: 300 }), textResponse("second answer"));
    let stdin: NodeJS.WritableStream | undefined;
    const done = runArbor(["--db", db, "chat", ...model(), "--cwd", dir], { env, keepStdinOpen: true, onSpawn: (child) => (stdin = child.stdin!) });
    stdin!.write("/help\n/frobnicate now\n");
    stdin!.write("one\n");
    await server.waitForRequests(1);
    stdin!.write("/followup two\n/exit\n");
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    for (const command of ["/tree", "/checkout", "/compact", "/label", "/name", "/followup", "/exit"]) expect(result.stdout).toContain(command);
    expect(result.stdout).toContain("Unknown command /frobnicate: nothing was sent to the model");
    expect(JSON.stringify(server.requests.map((request) => request.body))).not.toContain("frobnicate");
    expect(server.requests).toHaveLength(2);
    const outputLines = result.stdout.split("\n");
    expect(outputLines).toContain("first answer");
    expect(outputLines).toContain("second answer");
    expect(outputLines.filter((line) => line.startsWith(">"))).toEqual([]);
  });

  it("compact --keep-recent compacts a short session; without it the refusal names the flag", async () => {
    server.script(textResponse("one reply"), textResponse("two reply"));
    expect((await runArbor(["--db", db, "run", ...model(), "--cwd", dir, "first question"], { env })).code).toBe(0);
    expect((await runArbor(["--db", db, "run", ...model(), "--continue", "second question"], { env })).code).toBe(0);
    const refused = await runArbor(["--db", db, "compact", "latest", ...model()], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Nothing to compact.*--keep-recent/);
    // A --keep-recent over half the window is capped there, and the refusal names the value used: (100,000 - 16,384 reserved) / 2.
    const capped = await runArbor(["--db", db, "compact", "latest", ...model(), "--context-window", "100000", "--keep-recent", "999999999"], { env });
    expect(capped.code).toBe(1);
    expect(capped.stderr).toContain("The newest 41,808 tokens are kept as they are");
    expect(capped.stderr).not.toContain("999,999,999");
    const bad = await runArbor(["--db", db, "compact", "latest", ...model(), "--keep-recent", "lots"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Bad --keep-recent "lots"/);
    server.script(textResponse("## Goal\nSummary of the first turn."));
    const compacted = await runArbor(["--db", db, "compact", "latest", ...model(), "--keep-recent", "5"], { env });
    expect(compacted.code, compacted.stderr).toBe(0);
    expect(compacted.stdout).toMatch(/^compaction \S+: \d+ tokens before; keeps from \S+/);
  });

  it("sessions and tree show control characters of stored text as \\xNN, never raw (no terminal retitle, no cleared line)", async () => {
    server.script(textResponse("reply \u001b[2K\rhidden"));
    const prompt = "title \u001b]0;PWNED\u0007 \u001b[31mRED\u001b[0m";
    expect((await runArbor(["--db", db, "run", ...model(), "--cwd", dir, prompt], { env })).code).toBe(0);
    const listed = await runArbor(["--db", db, "sessions"], { env });
    const tree = await runArbor(["--db", db, "tree", "latest"], { env });
    for (const output of [listed.stdout, tree.stdout]) {
      expect(output).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(output).toContain("\\x1b]0;PWNED\\x07");
    }
    expect(tree.stdout).toContain("\\x1b[2K hidden");
  });

  it("rm asks on a terminal (no keeps the session), and --yes deletes without asking", async () => {
    const id = await importSample();
    const kept = await runArbor(["--db", db, "rm", id], { terminal: true, input: "n\n" });
    expect(kept.stdout).toMatch(/Delete session .*\[y\/N\]/);
    expect(kept.stdout).toContain("nothing was deleted");
    expect((await runArbor(["--db", db, "tree", id])).code).toBe(0);
    const deleted = await runArbor(["--db", db, "rm", id, "--yes"]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`deleted ${id}`);
    expect((await runArbor(["--db", db, "tree", id])).code).toBe(2);
  });

  it("a bare --model name is refused with the providers named, and no session is created", async () => {
    const result = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "gpt-test", "--cwd", dir, "hello"], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Bad --model "gpt-test": name the provider too, e.g. --model openai:gpt-test/);
    // Only the provider whose models look like it: no anthropic:gpt-test or google:gpt-test.
    expect(result.stderr).not.toMatch(/anthropic:gpt-test|google:gpt-test/);
    const claude = await runArbor(["--db", db, "run", "--model", "claude-sonnet-4-5", "--cwd", dir, "hello"], { env });
    expect(claude.stderr).toContain('name the provider too, e.g. --model anthropic:claude-sonnet-4-5.');
    const unknown = await runArbor(["--db", db, "run", "--model", "llama3", "--cwd", dir, "hello"], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/as --model <provider>:<model>, e\.g\. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or google:gemini-2\.5-flash/);
    expect(unknown.stderr).not.toContain("openai:llama3");
    expect(server.requests).toHaveLength(0);
    expect(JSON.parse((await runArbor(["--db", db, "sessions", "--json"])).stdout)).toEqual([]);
  });

  it("checkout --summarize without a key names the variable and says summaries call the model", async () => {
    const id = await importSample();
    const result = await runArbor(["--db", db, "checkout", id, "a0000005", "--summarize", ...model()], { env: { OPENAI_API_KEY: "" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/OPENAI_API_KEY.*--summarize calls the model/);
  });
});

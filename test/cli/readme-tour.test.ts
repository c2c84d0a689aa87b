/**
 * The README's tour as a new user runs it (issue 12 acceptance): in a fresh clone of this
 * repository, start `npm run demo-server`'s script, run the command it prints, then continue,
 * check out (with a summary and a label), resume by short id, fork, label, compact, look at the
 * events, export, and chat. Every command says what happened, the agent's files land in the
 * demo's `--cwd` (also when a session is resumed without `--cwd`), and `git status` in the clone
 * stays clean. Real child processes of the CLI and of the demo server; real SQLite.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, tempDir, type CliResult } from "./cli-helpers.ts";

const loader = join(repoRoot, "node_modules/tsx/dist/loader.mjs");
let base: string;
let clone: string;
let home: string;
let demo: ChildProcess | undefined;
let printed = "";

beforeAll(() => {
  base = tempDir("arbor-tour-");
  clone = join(base, "arbor");
  home = join(base, "home");
  mkdirSync(home);
  execFileSync("git", ["clone", "--quiet", "--depth", "1", `file://${repoRoot}`, clone]);
  // Dependencies from this checkout, one folder up (a symlink inside the clone would show in git status).
  symlinkSync(join(repoRoot, "node_modules"), join(base, "node_modules"));
});
afterAll(() => {
  demo?.kill();
});

const env = () => ({ ...process.env, HOME: home, OPENAI_API_KEY: "demo", ARBOR_DB: "", ARBOR_MODEL: "", ARBOR_AGENT_DIR: "", NO_COLOR: "1" });

/** `arbor ...args` from the clone, as `npx arbor` in the checkout would run it. */
function arbor(args: string[], input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", loader, join(clone, "scripts/arbor-dev.ts"), ...args], { cwd: clone, env: env(), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

async function startDemo(): Promise<{ url: string; workdir: string; args: string[] }> {
  demo = spawn(process.execPath, ["--import", loader, join(clone, "scripts/demo-server.ts")], { cwd: clone, env: env(), stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    demo!.stdout!.on("data", (chunk: Buffer) => {
      printed += chunk.toString("utf8");
      if (printed.includes("stop the server")) resolve();
    });
    demo!.once("exit", () => reject(new Error(`the demo server exited: ${printed}`)));
  });
  const command = /OPENAI_API_KEY=demo npx arbor (run .*)$/m.exec(printed)![1];
  const url = /--base-url (\S+)/.exec(command)![1];
  const workdir = /--cwd (\S+)/.exec(command)![1];
  const args = ["run", "--base-url", url, "--model", "openai:demo", "--cwd", workdir, /"(.*)"/.exec(command)![1]];
  return { url, workdir, args };
}

type Node = { entry: { id: string; type: string; message?: { role: string; content: unknown } }; children: Node[] };
async function entries(session: string): Promise<Node["entry"][]> {
  const tree = await arbor(["tree", session, "--json"]);
  const all: Node["entry"][] = [];
  const walk = (nodes: Node[]) => nodes.forEach((node) => (all.push(node.entry), walk(node.children)));
  walk((JSON.parse(tree.stdout) as { tree: Node[] }).tree);
  return all;
}

describe("the README tour in a fresh clone", { timeout: 600_000 }, () => {
  it("runs start to end, says what each command did, and leaves the checkout clean", async () => {
    const readme = readFileSync(join(clone, "README.md"), "utf8");
    const { workdir, args } = await startDemo();
    expect(printed).toContain("try, from the Arbor checkout:");

    // The quickstart's command, as the demo server prints it.
    const first = await arbor(args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/• write greeting\.txt → ok/);
    expect(first.stdout).toContain("Done: I wrote greeting.txt");
    const [, sessionId, short] = /session (\S+) \(short id (\w{8})\)/.exec(first.stderr)!;
    expect(readFileSync(join(workdir, "greeting.txt"), "utf8")).toBe("Hi from Arbor!\n");

    // arbor sessions: the short id and the time it sorts by.
    expect(readme).toContain("arbor sessions ");
    const sessions = await arbor(["sessions"]);
    expect(sessions.stdout).toMatch(new RegExp(`^${short}  ${sessionId}  changed \\S+  \\d+ messages`));

    // arbor tree latest / context latest --json
    const tree = await arbor(["tree", "latest"]);
    expect(tree.stdout).toContain(`session ${sessionId}`);
    expect(tree.stdout).toMatch(/^\* /m);
    const context = JSON.parse((await arbor(["context", "latest", "--json"])).stdout) as { messages: unknown[] };
    expect(context.messages.length).toBeGreaterThan(4);

    // arbor run --continue: resumes in the session's folder although no --cwd is given (item 1).
    const endOfFirstRun = (await entries(sessionId)).filter((entry) => entry.message?.role === "assistant").at(-1)!.id;
    const resumed = await arbor(["run", "--continue", "try the other approach"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("Done:");
    expect(existsSync(join(clone, "greeting.txt"))).toBe(false);

    // arbor checkout ... --summarize --label retry: back to the end of the first run, with a summary.
    const summarized = await arbor(["checkout", "latest", endOfFirstRun, "--summarize", "--label", "retry"]);
    expect(summarized.code, summarized.stderr).toBe(0);
    expect(summarized.stdout).toMatch(new RegExp(`moved to ${endOfFirstRun}; branch summary \\S+ of the branch you left; labelled the summary "retry"; the leaf is \\S+`));

    // arbor checkout latest <user message>: its text comes back for re-editing.
    const firstUser = (await entries(sessionId)).find((entry) => entry.message?.role === "user")!.id;
    const back = await arbor(["checkout", "latest", firstUser]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/^moved to \S+; the leaf is \S+\n\nmake a greeting\n$/);

    // arbor run --session <short id> "go on"
    const bySession = await arbor(["run", "--session", short, "go on"]);
    expect(bySession.code, bySession.stderr).toBe(0);
    expect(bySession.stdout).toContain("Done:");

    // arbor fork latest --at <entry>; arbor label
    const fork = await arbor(["fork", sessionId, "--at", endOfFirstRun]);
    expect(fork.code, fork.stderr).toBe(0);
    const forkId = fork.stdout.trim();
    expect(forkId).toMatch(/^[0-9a-f-]{36}$/);
    const label = await arbor(["label", sessionId, endOfFirstRun, "good state"]);
    expect(label.stdout).toMatch(new RegExp(`labelled ${endOfFirstRun} "good state" \\(entry \\S+\\)`));

    // arbor compact (with the README's --keep-recent, so the short demo session can compact)
    const compactLine = /arbor compact latest (--keep-recent \d+) --instructions "([^"]+)"/.exec(readme)!;
    const compact = await arbor(["compact", sessionId, ...compactLine[1].split(" "), "--instructions", compactLine[2]]);
    expect(compact.code, compact.stderr).toBe(0);
    expect(compact.stdout).toMatch(/^compaction \S+: \d+ tokens before; keeps from \S+/);

    // arbor events --json; arbor export -o ~/session.jsonl (outside the checkout)
    const events = await arbor(["events", sessionId, "--json"]);
    expect(events.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { type: string }).type)).toContain("run.ended");
    expect(readme).toContain("arbor export latest -o ~/session.jsonl");
    const exported = await arbor(["export", sessionId, "-o", join(home, "session.jsonl")]);
    expect(exported.stderr).toContain(`exported ${sessionId} to ${join(home, "session.jsonl")}`);

    // arbor chat --continue: /help, a prompt, /exit.
    const chat = await arbor(["chat", "--continue"], "/help\nhello again\n/exit\n");
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("/checkout <entry> [--summarize]");
    expect(chat.stdout).toContain("Done:");
    expect(chat.stderr).toMatch(/session \S+ \(short id \w{8}; \/help lists the commands/);

    expect((await arbor(["sessions", "--json"])).stdout).toContain(forkId);
    // Nothing was left in the checkout (the log is in the ignored .arbor/ folder).
    expect(existsSync(join(clone, ".arbor", "arbor.db"))).toBe(true);
    expect(execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: clone, encoding: "utf8" })).toBe("");
  });
});

/**
 * pi's command line: `-c`, `-r`, `-p`, `--thinking`, `provider/model[:thinking]`, `--version`,
 * piped stdin, `@file`, bare `arbor` on a terminal, pi's and Arbor's global resource folders,
 * and labels where an entry id is taken. Real CLI processes, a real SQLite file, the loopback
 * model server; the interactive ones on a real pseudo-terminal.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { repoRoot, runArbor, tempDir } from "./cli-helpers.ts";
import { spawnArborPty, type PtyArbor } from "./pty-helpers.ts";

let server: OpenAIServer;
let term: PtyArbor | undefined;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  term?.kill();
  term = undefined;
  await server.close();
});

const env = { OPENAI_API_KEY: "test-key" };
const body = (index: number) => JSON.stringify(server.requests[index].body.messages);

describe("pi's flags", { timeout: 240_000 }, () => {
  it("--version and -v print the package version", async () => {
    const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
    for (const flag of ["--version", "-v"]) {
      const result = await runArbor([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe(version);
    }
  });

  it("-p prints one answer with piped stdin and @file in the prompt, -c continues, --thinking and provider/model:level are logged", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    writeFileSync(join(dir, "notes.txt"), "NOTES-CONTENT line\n");
    server.script(textResponse("printed answer"), textResponse("continued answer"));
    const first = await runArbor(["--db", db, "-p", "--base-url", server.url, "--model", "openai/gpt-test:low", "--cwd", dir, `@${join(dir, "notes.txt")}`, "summarize", "this"], { env, input: "PIPED-INPUT\n" });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("printed answer");
    const sent = body(0);
    expect(sent).toContain("PIPED-INPUT");
    expect(sent).toContain(`<file name=\\"${join(dir, "notes.txt")}\\">`);
    expect(sent).toContain("NOTES-CONTENT line");
    expect(sent).toContain("summarize this");
    expect(server.requests[0].body.model).toBe("gpt-test");
    const second = await runArbor(["--db", db, "-c", "--base-url", server.url, "--model", "openai:gpt-test", "--thinking", "high", "go", "on"], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("continued answer");
    expect(body(1)).toContain("printed answer"); // the same session: the first answer is in the context
    const tree = await runArbor(["--db", db, "tree", "latest"]);
    expect(tree.stdout).toContain("thinking → low");
    expect(tree.stdout).toContain("thinking → high");
    const bad = await runArbor(["--db", db, "run", "--thinking", "huge", "x"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("off, minimal, low, medium, high, xhigh");
    const missing = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "@nope.txt", "x"], { env, cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("@nope.txt: no such file");
  });

  it("labels work where an entry id does: checkout, fork --at, context --leaf", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    server.script(textResponse("one"), textResponse("two"));
    await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "first"], { env });
    await runArbor(["--db", db, "run", "-c", "--base-url", server.url, "--model", "openai:gpt-test", "second"], { env });
    const tree = (await runArbor(["--db", db, "tree", "latest"])).stdout;
    const firstAnswer = /(\S+) assistant "one"/.exec(tree)![1];
    expect((await runArbor(["--db", db, "label", "latest", firstAnswer, "checkpoint"])).code).toBe(0);
    const context = await runArbor(["--db", db, "context", "latest", "--leaf", "checkpoint", "--json"]);
    expect(context.code, context.stderr).toBe(0);
    expect(JSON.parse(context.stdout).leafId).toBe(firstAnswer);
    const fork = await runArbor(["--db", db, "fork", "latest", "--at", "checkpoint"]);
    expect(fork.code, fork.stderr).toBe(0);
    const moved = await runArbor(["--db", db, "checkout", "latest", "checkpoint"]);
    expect(moved.code, moved.stderr).toBe(0);
    const unknown = await runArbor(["--db", db, "checkout", "latest", "no-such-label"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No entry or label "no-such-label"');
  });
});

describe("pi's terminal habits", { timeout: 240_000 }, () => {
  it("bare arbor opens the chat on a terminal, and -r picks the session to resume", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    server.script(textResponse("chat answer"), textResponse("resumed answer"));
    term = spawnArborPty(["--db", db, "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir], { cwd: dir, env });
    await term.waitFor("/help lists the commands");
    term.write("hello there\r");
    await term.waitFor("chat answer");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    const id = /session (\S+) \(short id (\S+);/.exec(term.screen())!;
    term = spawnArborPty(["--db", db, "-r", "--base-url", server.url, "--model", "openai:gpt-test"], { cwd: dir, env });
    await term.waitFor("resume which session?");
    expect(term.screen()).toContain(id[2]);
    term.write("1\r");
    await term.waitFor(`session ${id[1]}`);
    term.write("and now?\r");
    await term.waitFor("resumed answer");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(body(1)).toContain("chat answer");
  });

  it("reads AGENTS.md, skills and prompts from ~/.pi/agent, ~/.arbor/agent, .pi/skills and .pi/prompts", async () => {
    const dir = tempDir();
    const home = tempDir("arbor-home-");
    const skill = (root: string, name: string) => {
      mkdirSync(join(root, name), { recursive: true });
      writeFileSync(join(root, name, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} skill.\n---\n${name.toUpperCase()}-BODY\n`);
    };
    const prompt = (root: string, name: string) => {
      mkdirSync(root, { recursive: true });
      writeFileSync(join(root, `${name}.md`), `---\ndescription: ${name}\n---\n${name.toUpperCase()}-TEMPLATE $1\n`);
    };
    mkdirSync(join(home, ".pi/agent"), { recursive: true });
    mkdirSync(join(home, ".arbor/agent"), { recursive: true });
    writeFileSync(join(home, ".pi/agent/AGENTS.md"), "PI-GLOBAL-AGENTS\n");
    writeFileSync(join(home, ".arbor/agent/AGENTS.md"), "ARBOR-GLOBAL-AGENTS\n");
    skill(join(home, ".pi/agent/skills"), "pi-global");
    skill(join(home, ".arbor/agent/skills"), "arbor-global");
    skill(join(dir, ".pi/skills"), "pi-project");
    prompt(join(home, ".pi/agent/prompts"), "pig");
    prompt(join(home, ".arbor/agent/prompts"), "arg");
    prompt(join(dir, ".pi/prompts"), "prj");
    server.script(textResponse("a1"), textResponse("a2"), textResponse("a3"), textResponse("a4"));
    term = spawnArborPty(["--db", join(dir, "arbor.db"), "chat", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir], {
      cwd: dir,
      env: { ...env, HOME: home, ARBOR_AGENT_DIR: "", PI_CODING_AGENT_DIR: "" },
    });
    const start = await term.waitFor("/help lists the commands");
    expect(start).toContain(join(home, ".pi/agent/AGENTS.md"));
    expect(start).toContain(join(home, ".arbor/agent/AGENTS.md"));
    const answers = ["a1", "a2", "a3", "a4"];
    const lines = ["/pig one", "/arg two", "/prj three", "/skill:pi-global go"];
    for (const [index, line] of lines.entries()) {
      term.write(`${line}\r`);
      await term.waitFor(new RegExp(`^${answers[index]}$`, "m"));
    }
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    const system = JSON.stringify(server.requests[0].body.messages[0]);
    for (const text of ["PI-GLOBAL-AGENTS", "ARBOR-GLOBAL-AGENTS", "pi-global", "arbor-global", "pi-project"]) expect(system).toContain(text);
    expect(body(0)).toContain("PIG-TEMPLATE one");
    expect(body(1)).toContain("ARG-TEMPLATE two");
    expect(body(2)).toContain("PRJ-TEMPLATE three");
    expect(body(3)).toContain("PI-GLOBAL-BODY");
  });
});

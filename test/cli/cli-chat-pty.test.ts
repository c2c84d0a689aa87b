/**
 * `arbor chat` on a real pseudo-terminal (node-pty), its screen read through a headless
 * terminal emulator (@xterm/headless): what a person at a terminal sees and types.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { textResponse, toolCallResponse } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { ptyChatPerTest, spawnArborPty, type PtyArbor } from "./pty-helpers.ts";

const each = ptyChatPerTest();

function chat(dir: string, options: Parameters<typeof spawnArborPty>[1] = {}, extra: string[] = []): PtyArbor {
  each.running = spawnArborPty(["--db", join(dir, "arbor.db"), "chat", "--base-url", each.server.url, "--model", "openai:gpt-test", "--cwd", dir, ...extra], {
    cwd: dir,
    ...options,
    env: { OPENAI_API_KEY: "test-key", ...options.env },
  });
  return each.running;
}

/** Resolves once the /tree navigator is gone from the screen. */
async function navigatorClosed(term: PtyArbor): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (term.screen().includes("session tree ↑↓")) {
    if (Date.now() > deadline) throw new Error(`the navigator stayed open; screen:\n${term.screen()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A chat in `dir` that asked "first" and "second", saw "first answer" and "second answer", then typed /tree; the model answers `later` next. */
async function twoTurnsThenTree(dir: string, ...later: ReturnType<typeof textResponse>[]): Promise<PtyArbor> {
  each.server.script(textResponse("first answer"), textResponse("second answer"), ...later);
  const term = chat(dir);
  await term.waitFor("/help lists the commands");
  term.write("first\r");
  await term.waitFor("first answer");
  term.write("second\r");
  await term.waitFor("second answer");
  term.write("/tree\r");
  return term;
}

function userTexts(index: number): string[] {
  return (each.server.requests[index].body.messages as { role: string; content: unknown }[]).filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
}

describe("arbor chat on a terminal", { timeout: 240_000 }, () => {
  it("runs three prompts in a row, then /exit leaves with 0", async () => {
    const dir = tempDir();
    each.server.script(textResponse("first answer"), toolCallResponse([{ id: "call_1", name: "bash", arguments: { command: "echo tool-said-hello" } }]), textResponse("second answer"), textResponse("third answer"));
    const term = chat(dir);
    await term.waitFor("/help lists the commands");
    term.write("one\r");
    await term.waitFor("first answer");
    // The footer: model, thinking, tokens, context, short id, sandbox.
    await term.waitFor(/openai:gpt-test · thinking off · .*[0-9a-f]{8} · sandbox none/);
    term.write("!echo shell-into-context\r");
    await term.waitFor(/^shell-into-context$/m);
    term.write("!!echo shell-kept-out\r");
    await term.waitFor(/^shell-kept-out$/m);
    term.write("/thinking high\r");
    await term.waitFor("thinking high");
    term.write("two\r");
    await term.waitFor("second answer");
    term.write("three\r");
    await term.waitFor("third answer");
    // Tool calls are one line each; Ctrl+O shows their output.
    expect(term.screen()).toMatch(/• bash echo tool-said-hello → ok/);
    expect(term.screen()).not.toMatch(/^ +tool-said-hello/m);
    term.write("\x0f");
    await term.waitFor(/^ +tool-said-hello/m);
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests).toHaveLength(4);
    expect(userTexts(3).join(" ")).toContain("three");
    expect(userTexts(1).join(" ")).toContain("shell-into-context");
    expect(JSON.stringify(each.server.requests[1].body.messages)).not.toContain("shell-kept-out");
    expect(term.screen()).toMatch(/openai:gpt-test · thinking high · /);
  });

  it("sends a 3-line paste as one message", async () => {
    const dir = tempDir();
    each.server.script(textResponse("pasted answer"), textResponse("after answer"));
    const term = chat(dir);
    await term.waitFor("/help lists the commands");
    term.paste("line one\rline two\rline three");
    term.write("\r");
    await term.waitFor("pasted answer");
    term.write("after\r");
    await term.waitFor("after answer");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests).toHaveLength(2);
    const first = userTexts(0);
    expect(first).toHaveLength(1);
    expect(first[0]).toContain("line one\\nline two\\nline three");
  });

  it("expands a skill typed during a run, refuses a broken one, and shows load problems at start and in /help", async () => {
    const dir = tempDir();
    const home = tempDir("arbor-home-");
    mkdirSync(join(dir, ".pi/skills/greeter"), { recursive: true });
    writeFileSync(join(dir, ".pi/skills/greeter/SKILL.md"), "---\nname: greeter\ndescription: Greets people.\n---\nAlways greet with GREETER-BODY.\n");
    mkdirSync(join(dir, ".arbor/skills/bad"), { recursive: true });
    writeFileSync(join(dir, ".arbor/skills/bad/SKILL.md"), "---\nname: bad\n---\nno description\n");
    each.server.script(toolCallResponse([{ id: "call_wait", name: "bash", arguments: { command: "sleep 3; echo waited" } }]), textResponse("steered answer"));
    const term = chat(dir, { env: { HOME: home, ARBOR_AGENT_DIR: "", PI_CODING_AGENT_DIR: "" } });
    const start = await term.waitFor("/help lists the commands");
    expect(start).toMatch(/not loaded: .*bad.*SKILL\.md/);
    term.write("/skill:bad hello\r");
    await term.waitFor("/skill:bad did not load");
    term.write("start the work\r");
    await each.server.waitForRequests(1);
    await term.waitFor("bash sleep 3");
    term.write("/skill:greeter be brief\r");
    await term.waitFor("steered answer");
    term.write("/help\r");
    await term.waitFor("skill and template problems:");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests).toHaveLength(2);
    const steered = userTexts(1).at(-1)!;
    expect(steered).toContain("GREETER-BODY");
    expect(steered).toContain("be brief");
    expect(steered).not.toContain("/skill:greeter");
  });

  it("checks out a label, and /checkout --summarize names the summary as the leaf", async () => {
    const dir = tempDir();
    const term = await twoTurnsThenTree(dir, textResponse("the summary of the branch"));
    const tree = await term.waitFor(/(\S+) assistant "second answer"/);
    const secondAnswer = /(\S+) assistant "second answer"/.exec(tree)![1];
    const firstAnswer = /(\S+) assistant "first answer"/.exec(tree)![1];
    // /tree opened the navigator; Esc gives the editor back.
    term.write("\x1b");
    await navigatorClosed(term);
    term.write(`/label ${firstAnswer} start here\r`);
    await term.waitFor("labelled");
    term.write("/checkout --summarize start here\r");
    const moved = await term.waitFor(/the leaf is (\S+)/);
    const leaf = /moved to (\S+); branch summary (\S+) of the branch you left; the leaf is (\S+)/.exec(moved)!;
    expect(leaf[1]).toBe(firstAnswer);
    expect(leaf[3]).toBe(leaf[2]);
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    const sessions = JSON.parse((await runArbor(["--db", join(dir, "arbor.db"), "sessions", "--json"])).stdout) as { id: string }[];
    const after = await runArbor(["--db", join(dir, "arbor.db"), "tree", sessions[0].id]);
    expect(after.stdout).toMatch(new RegExp(`\\* *[^\\n]*${leaf[2]} branch summary`));
    expect(after.stdout).toContain(secondAnswer);
  });
});

describe("the /tree navigator", { timeout: 240_000 }, () => {
  it("labels an entry, jumps to the label with Tab and checks it out with Enter", async () => {
    const dir = tempDir();
    const term = await twoTurnsThenTree(dir, textResponse("third answer"), textResponse("branched answer"));
    await term.waitFor(/^›.*assistant "second answer"/m);
    // Up twice: from the leaf (the second answer) past "user: second" to the first answer.
    term.write("\x1b[A");
    term.write("\x1b[A");
    const moved = await term.waitFor(/^›.*assistant "first answer"/m);
    const firstAnswer = /^›\s*(\S+) assistant "first answer"/m.exec(moved)![1];
    term.write("l");
    await term.waitFor("label for");
    term.write("start here\r");
    await term.waitFor(/assistant "first answer" \[start here\]/);
    term.write("\x1b");
    // A key typed at once after Esc would arrive as Alt+key (the terminal's own ambiguity).
    await navigatorClosed(term);
    term.write("third\r");
    await term.waitFor("third answer");
    term.write("/tree\r");
    await term.waitFor(/^›.*assistant "third answer"/m);
    term.write("\t");
    await term.waitFor(/^›.*assistant "first answer" \[start here\]/m);
    term.write("\r");
    await term.waitFor(new RegExp(`moved to ${firstAnswer}; the leaf is ${firstAnswer}`));
    term.write("branch\r");
    await term.waitFor("branched answer");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    // The fourth request holds the branch up to the label: no second or third prompt.
    const context = JSON.stringify(each.server.requests[3].body.messages);
    expect(context).toContain("first answer");
    expect(context).toContain("branch");
    expect(context).not.toContain('"second"');
    expect(context).not.toContain('"third"');
  });
});

describe("the /tree navigator with files", { timeout: 240_000 }, () => {
  it("f checks out an entry and puts the files back as they were there", async () => {
    const dir = tempDir();
    each.server.script(
      toolCallResponse([{ id: "call_v1", name: "write", arguments: { path: "a.txt", content: "version one\n" } }]),
      textResponse("wrote one"),
      toolCallResponse([{ id: "call_v2", name: "write", arguments: { path: "a.txt", content: "version two\n" } }]),
      textResponse("wrote two"),
    );
    const term = chat(dir, {}, ["--checkpoints"]);
    await term.waitFor("/help lists the commands");
    term.write("write one\r");
    await term.waitFor("wrote one");
    term.write("write two\r");
    await term.waitFor("wrote two");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("version two\n");
    term.write("/tree\r");
    await term.waitFor(/^›.*assistant "wrote two"/m);
    // Up to the first answer: the rows between are the second prompt, its call, its result and any checkpoint entries.
    for (let step = 0; step < 12 && !/^›.*assistant "wrote one"/m.test(term.screen()); step++) {
      const selected = /^›.*$/m.exec(term.screen())![0];
      term.write("\x1b[A");
      // One row per key: wait until the selection moved before the next.
      await term.waitFor(new RegExp(`^›(?!${selected.slice(1).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$).*$`, "m"));
    }
    const at = await term.waitFor(/^›.*assistant "wrote one"/m);
    const entry = /^›\s*(\S+) assistant "wrote one"/m.exec(at)![1];
    term.write("f");
    await term.waitFor(new RegExp(`files: \\d+ path\\(s\\) restored to the tree recorded at ${entry}`));
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("version one\n");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
  });
});

describe("keys and approvals on a terminal", { timeout: 240_000 }, () => {
  it("Esc during a tool aborts the run; the chat goes on; Ctrl-C twice quits", async () => {
    const dir = tempDir();
    each.server.script(toolCallResponse([{ id: "call_long", name: "bash", arguments: { command: "sleep 60; echo never" } }]), textResponse("after the abort"));
    const term = chat(dir);
    await term.waitFor("/help lists the commands");
    term.write("start something long\r");
    await term.waitFor("bash sleep 60");
    term.write("\x1b");
    await term.waitFor("run aborted");
    term.write("next\r");
    await term.waitFor("after the abort");
    term.write("\x03");
    await term.waitFor("press Ctrl-C again to quit");
    term.write("\x03");
    expect(await term.exited, term.screen()).toBe(0);
    expect(term.screen()).toContain("error (aborted)");
    expect(term.screen()).not.toMatch(/^ +never$/m); // the command's output line: it never ran to the end
  });

  it("asks for an approval in the terminal and runs the tool once answered", async () => {
    const dir = tempDir();
    each.server.script(toolCallResponse([{ id: "call_ok", name: "bash", arguments: { command: "echo approved-run" } }]), textResponse("approved answer"));
    const term = chat(dir, {}, ["--approve", "bash"]);
    await term.waitFor("/help lists the commands");
    term.write("run it\r");
    await term.waitFor(/approve bash .*echo approved-run/);
    // The call's line says it waits (the TUI), until the answer.
    await term.waitFor(/• bash echo approved-run → waiting for approval/);
    term.write("y\r");
    await term.waitFor("approved answer");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(term.screen()).toContain("approved-run");
  });
});

describe("terminals of every size", { timeout: 240_000 }, () => {
  it("finishes a run on a zero-size terminal", async () => {
    const dir = tempDir();
    each.server.script(toolCallResponse([{ id: "call_1", name: "bash", arguments: { command: "sleep 1; echo slept" } }]), textResponse("done on a tiny terminal"));
    each.running = spawnArborPty(["--db", join(dir, "arbor.db"), "run", "--base-url", each.server.url, "--model", "openai:gpt-test", "--cwd", dir, "go"], {
      cwd: dir,
      stty: "rows 0 cols 0",
      env: { OPENAI_API_KEY: "test-key" },
    });
    const code = await each.running.exited;
    expect(code, each.running.raw().slice(0, 2000)).toBe(0);
    expect(each.running.raw()).toContain("done on a tiny terminal");
    // No spinner frames were drawn (ora loops on a zero-width terminal).
    expect(each.running.raw().length).toBeLessThan(20_000);
  });

  it("chats on a zero-size terminal, and after a resize mid-run", async () => {
    const dir = tempDir();
    each.server.script(textResponse("tiny answer"), toolCallResponse([{ id: "call_1", name: "bash", arguments: { command: "sleep 2; echo slept" } }]), textResponse("resized answer"), textResponse("last answer"));
    const term = chat(dir, { stty: "rows 0 cols 0" });
    await term.waitFor("/help lists the commands");
    term.write("hello\r");
    await term.waitFor("tiny answer");
    term.resize(60, 12);
    term.write("work\r");
    await term.waitFor("bash sleep 2");
    term.resize(30, 8);
    term.resize(0, 0);
    await term.waitFor("resized answer");
    term.resize(80, 24);
    term.write("again\r");
    await term.waitFor("last answer");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests).toHaveLength(4);
  });

  it("keeps the TUI working through resizes mid-run, down to zero and back", async () => {
    const dir = tempDir();
    each.server.script(toolCallResponse([{ id: "call_1", name: "bash", arguments: { command: "sleep 2; echo slept" } }]), textResponse("resized answer"), textResponse("after resize"));
    const term = chat(dir, { cols: 100, rows: 30 });
    await term.waitFor("/help lists the commands");
    term.write("work\r");
    await term.waitFor(/bash sleep 2; echo slept → running/);
    term.resize(60, 12);
    term.resize(30, 8);
    term.resize(0, 0);
    term.resize(90, 24);
    await term.waitFor("resized answer");
    term.write("again\r");
    await term.waitFor("after resize");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests).toHaveLength(3);
    expect(term.screen()).toMatch(/• bash sleep 2; echo slept → ok/);
  });

  it("chats with TERM=dumb: no spinner, the answers and tool output in plain lines", async () => {
    const dir = tempDir();
    each.server.script(toolCallResponse([{ id: "call_1", name: "bash", arguments: { command: "echo plain-output" } }]), textResponse("dumb answer"), textResponse("second dumb"));
    const term = chat(dir, { env: { TERM: "dumb" } });
    await term.waitFor("/help lists the commands");
    term.write("go\r");
    await term.waitFor("dumb answer");
    term.write("more\r");
    await term.waitFor("second dumb");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(term.screen()).toContain("plain-output");
    expect(term.raw()).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });
});

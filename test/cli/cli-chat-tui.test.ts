/**
 * The chat TUI's own features on a real pseudo-terminal (node-pty), read through a headless
 * terminal emulator (@xterm/headless): the multi-line editor and its history, `@` completion
 * honouring .gitignore, markdown, Ctrl+O, the session commands /model, /fork, /new, /resume, and
 * the branch drawn again after /model as it was drawn live.
 * With ARBOR_RECORD_SCREEN=path, the first test writes its screen there (the README's screen).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { textResponse, toolCallResponse } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "./cli-helpers.ts";
import { ptyChatPerTest, spawnArborPty, type PtyArbor } from "./pty-helpers.ts";

const each = ptyChatPerTest();

function chat(db: string, cwd: string, options: Parameters<typeof spawnArborPty>[1] = {}): PtyArbor {
  each.running = spawnArborPty(["--db", db, "--base-url", each.server.url, "--model", "openai:gpt-test", "--cwd", cwd], { cwd, ...options, env: { OPENAI_API_KEY: "test-key", ...options.env } });
  return each.running;
}

/** Resolves once `text` is no longer on the screen. */
async function gone(term: PtyArbor, text: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (term.screen().includes(text)) {
    if (Date.now() > deadline) throw new Error(`the screen kept ${text}:\n${term.screen()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function userTexts(index: number): string[] {
  return (each.server.requests[index].body.messages as { role: string; content: unknown }[]).filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
}

describe("the chat TUI", { timeout: 240_000 }, () => {
  it("renders markdown, a tool call as one line with Ctrl+O for its output, and @ completes files outside .gitignore", async () => {
    const dir = tempDir();
    const db = join(tempDir(), "arbor.db");
    writeFileSync(join(dir, "notes.md"), "# Notes\n");
    writeFileSync(join(dir, "todo.txt"), "buy milk\n");
    writeFileSync(join(dir, "secret.txt"), "hidden\n");
    writeFileSync(join(dir, ".gitignore"), "secret.txt\n");
    each.server.script(
      toolCallResponse([{ id: "call_ls", name: "bash", arguments: { command: "ls" } }]),
      textResponse("There are two files:\n\n- **notes.md**: a heading\n- `todo.txt`: one task"),
    );
    const term = chat(db, dir, { cols: 90, rows: 24 });
    await term.waitFor("/help lists the commands");
    term.write("what is in this folder?\r");
    await term.waitFor("one task");
    const screen = term.screen();
    // Markdown is rendered: no asterisks or backticks, a bullet for each item.
    expect(screen).toMatch(/- notes\.md: a heading/);
    expect(screen).not.toContain("**notes.md**");
    expect(screen).toMatch(/• bash ls → ok \(\d+ ms\) · 3 line\(s\), ctrl\+o shows/);
    expect(screen).not.toMatch(/^ +todo\.txt$/m);
    term.write("\x0f");
    await term.waitFor(/^ +todo\.txt$/m);
    term.write("look at @t");
    const completion = await term.waitFor(/→ todo\.txt/);
    // The list under the editor: each row a name and its path. secret.txt exists (ls listed it) but is gitignored.
    const rows = completion.split("\n").filter((line) => /^(→ | {2})\S+ {2,}\S+ *$/.test(line));
    expect(rows.join("\n")).toContain("notes.md");
    expect(rows.join("\n")).not.toContain("secret.txt");
    expect(completion).toMatch(/^ +secret\.txt$/m);
    if (process.env.ARBOR_RECORD_SCREEN) writeFileSync(process.env.ARBOR_RECORD_SCREEN, `${term.lines().map((line) => line.trimEnd()).join("\n")}\n`);
    // Tab takes the highlighted path; Enter sends.
    term.write("\t");
    await term.waitFor("look at @todo.txt");
    // Ctrl-C clears the editor (nothing was sent), then /exit leaves.
    term.write("\x03");
    await gone(term, "look at @todo.txt");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests).toHaveLength(2);
  });

  it("Alt+Enter adds a line, Enter sends both as one message, and Up brings it back", async () => {
    const dir = tempDir();
    each.server.script(textResponse("first reply"), textResponse("second reply"));
    const term = chat(join(dir, "arbor.db"), dir);
    await term.waitFor("/help lists the commands");
    term.write("line one");
    term.write("\x1b\r");
    term.write("line two");
    await term.waitFor(/^line two/m);
    term.write("\r");
    await term.waitFor("first reply");
    term.write("\x1b[A");
    await term.waitFor(/^line one *\nline two/m);
    term.write("\r");
    await term.waitFor("second reply");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(userTexts(0)).toEqual([JSON.stringify("line one\nline two")]);
    expect(userTexts(1).at(-1)).toBe(JSON.stringify("line one\nline two"));
  });

  it("sends the command line's messages one after the other, and --plain keeps the line chat", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    each.server.script(textResponse("reply to first"), textResponse("reply to second"), textResponse("plain reply"));
    each.running = spawnArborPty(["--db", db, "--base-url", each.server.url, "--model", "openai:gpt-test", "--cwd", dir, "first message", "second message"], { cwd: dir, env: { OPENAI_API_KEY: "test-key" } });
    let term = each.running;
    await term.waitFor("reply to second");
    // The TUI: the editor's borders, the footer.
    expect(term.screen()).toMatch(/^─{20,}$/m);
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(userTexts(1)).toEqual([JSON.stringify("first message"), JSON.stringify("second message")]);
    each.running = spawnArborPty(["--db", db, "chat", "--plain", "-c", "--base-url", each.server.url, "--model", "openai:gpt-test"], { cwd: dir, env: { OPENAI_API_KEY: "test-key" } });
    term = each.running;
    await term.waitFor("/help lists the commands");
    term.write("plain\r");
    await term.waitFor("plain reply");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    // The line chat: its "> " prompt and after-run status line, no editor borders or bracketed TUI redraws.
    expect(term.screen()).toMatch(/^> /m);
    expect(term.screen()).not.toMatch(/^─{20,}$/m);
    expect(userTexts(2)).toEqual([JSON.stringify("first message"), JSON.stringify("second message"), JSON.stringify("plain")]);
  });

  it("/model switches (logged), /fork and /new start sessions, /resume picks one back", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    each.server.script(textResponse("answer one"), textResponse("answer two"), textResponse("answer three"), textResponse("answer four"), textResponse("answer five"));
    const term = chat(db, dir);
    const start = await term.waitFor("/help lists the commands");
    const original = /session (\S+) \(short id (\S+);/.exec(start)!;
    term.write("one\r");
    await term.waitFor("answer one");
    term.write("/model openai:gpt-other\r");
    await term.waitFor("model openai:gpt-other (logged)");
    await term.waitFor(/^openai:gpt-other · thinking off/m);
    term.write("two\r");
    await term.waitFor("answer two");
    term.write("/fork\r");
    const forked = /forked into session (\S+)/.exec(await term.waitFor(/forked into session \S+/))![1];
    term.write("three\r");
    await term.waitFor("answer three");
    term.write("/new\r");
    await term.waitFor(/new session \S+/);
    term.write("four\r");
    await term.waitFor("answer four");
    term.write("/resume\r");
    const picker = await term.waitFor(new RegExp(`${original[2]} `));
    const rows = picker.split("\n").filter((line) => /^(→| ) [0-9a-f]{8} /.test(line));
    const index = rows.findIndex((line) => line.includes(original[2]));
    expect(index).toBeGreaterThanOrEqual(0);
    for (let step = 0; step < index; step++) term.write("\x1b[B");
    await term.waitFor(new RegExp(`^→ ${original[2]}`, "m"));
    term.write("\r");
    await term.waitFor(`resumed session ${original[1]}`);
    term.write("five\r");
    await term.waitFor("answer five");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
    expect(each.server.requests.map((request) => request.body.model)).toEqual(["gpt-test", "gpt-other", "gpt-other", "gpt-other", "gpt-other"]);
    expect(userTexts(2)).toEqual([JSON.stringify("one"), JSON.stringify("two"), JSON.stringify("three")]);
    expect(userTexts(3)).toEqual([JSON.stringify("four")]);
    expect(userTexts(4)).toEqual([JSON.stringify("one"), JSON.stringify("two"), JSON.stringify("five")]);
    const tree = await runArbor(["--db", db, "tree", original[1]]);
    expect(tree.stdout).toContain("model → openai:gpt-other");
    expect((await runArbor(["--db", db, "tree", forked])).stdout).toContain("three");
  });

  it("drawing the branch again (/model) keeps an aborted call's outcome and duration, the abort notice, and !cmd as shown", async () => {
    const dir = tempDir();
    const db = join(dir, "arbor.db");
    each.server.script(toolCallResponse([{ id: "call_sleep", name: "bash", arguments: { command: "sleep 30" } }]));
    const term = chat(db, dir, { cols: 100, rows: 30 });
    await term.waitFor("/help lists the commands");
    term.write("wait a while\r");
    await term.waitFor("running…");
    term.write("\x1b");
    await term.waitFor("run aborted");
    term.write("!echo bang-output\r");
    await term.waitFor(/^bang-output$/m);
    term.write("/model openai:gpt-other\r");
    const screen = await term.waitFor("model openai:gpt-other (logged)");
    expect(screen).toMatch(/• bash sleep 30 → error \(aborted\) \([1-9]\d* ms\)/);
    expect(screen).not.toContain("error (failed)");
    expect(screen).toContain("run aborted");
    expect(screen).toMatch(/^\$ echo bang-output$/m);
    expect(screen).toMatch(/^bang-output$/m);
    expect(screen).not.toContain("Ran `echo");
    term.write("/exit\r");
    expect(await term.exited, term.screen()).toBe(0);
  });
});

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createBashTool } from "../../src/adapters/tools/bash.ts";
import type { ToolResult } from "../../src/core/tools.ts";
import { outcome, piOutcome, tempDir } from "./tool-harness.ts";

let root: string;
let env: ExecutionEnv;

beforeEach(() => {
  root = tempDir();
  env = createExecutionEnv({ root, spillDir: join(tempDir(), "spill") });
});

const pi = () => createBashToolDefinition(root);

/** Polls (bounded) until `check` is true. No timing is asserted; the bound only avoids hangs. */
async function until(check: () => boolean, what: string, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

describe("bash: pi-compatible results", () => {
  it("merges stdout and stderr and matches pi's text", async () => {
    const command = "echo hello; echo oops 1>&2";
    const ours = await outcome(createBashTool(env), { command });
    const theirs = await piOutcome(pi(), { command });
    expect(ours).toMatchObject({ error: false, text: "hello\noops\n" });
    expect(ours.text).toBe(theirs.text);
  });

  it("reports non-zero exits and empty output like pi", async () => {
    for (const command of ["echo partial; exit 3", "true", "exit 1"]) {
      const ours = await outcome(createBashTool(env), { command });
      const theirs = await piOutcome(pi(), { command });
      expect({ error: ours.error, text: ours.text }).toEqual({ error: theirs.error, text: theirs.text });
    }
  });

  it("runs in cwd", async () => {
    const nested = createExecutionEnv({ root, cwd: "." });
    expect((await outcome(createBashTool(nested), { command: "pwd" })).text).toBe(`${root}\n`);
  });

  it("truncates by lines with pi's notice (lines counted as editors do) and spills the full output", async () => {
    const command = "seq 1 3000";
    const ours = await outcome(createBashTool(env), { command });
    const theirs = await piOutcome(pi(), { command });
    const path = (ours.result?.details as { fullOutputPath: string }).fullOutputPath;
    const last2000 = Array.from({ length: 2000 }, (_, index) => String(index + 1001)).join("\n");
    expect(ours.text).toBe(`${last2000}\n\n\n[Showing lines 1001-3000 of 3000. Full output: ${path}]`);
    expect(readFileSync(path, "utf8")).toBe(Array.from({ length: 3000 }, (_, index) => `${index + 1}\n`).join(""));
    // pi counts the empty "line" after the final newline: it shows one real line fewer.
    const piPath = (theirs.result?.details as { fullOutputPath: string }).fullOutputPath;
    expect(theirs.text.endsWith(`[Showing lines 1002-3001 of 3001. Full output: ${piPath}]`)).toBe(true);
    // The model can read the named file even though it is outside the root.
    expect(await env.resolvePath(path, "read")).toBe(path);
  });

  it("truncates by bytes with the 50.0KB notice and spills the full output", async () => {
    const command = "for i in $(seq 1 100); do printf '%01000d\\n' $i; done";
    const ours = await outcome(createBashTool(env), { command });
    const theirs = await piOutcome(pi(), { command });
    const details = ours.result?.details as { fullOutputPath: string; truncation: { truncatedBy: string } };
    expect(details.truncation.truncatedBy).toBe("bytes");
    expect(ours.text).toMatch(/\[Showing lines 50-100 of 100 \(50\.0KB limit\)\. Full output: .*\]$/);
    const piPath = (theirs.result?.details as { fullOutputPath: string }).fullOutputPath;
    // The same kept lines as pi; only the count differs (pi counts a trailing newline as line 101).
    const withoutNotice = (text: string) => text.slice(0, text.lastIndexOf("\n\n[Showing")).replace(/\n$/, "");
    expect(withoutNotice(ours.text)).toBe(withoutNotice(theirs.text));
    expect(theirs.text.replace(piPath, "PATH")).toMatch(/\[Showing lines 50-101 of 101 \(50\.0KB limit\)\. Full output: PATH\]$/);
    expect(readFileSync(details.fullOutputPath, "utf8").length).toBe(100 * 1001);
  });
});

describe("bash: fixes over pi", () => {
  it("counts lines as editors do: `seq 2000` fits the 2000-line limit whole (pi hides line 1)", async () => {
    const command = "seq 2000";
    const ours = await outcome(createBashTool(env), { command });
    const theirs = await piOutcome(pi(), { command });
    expect(ours.error).toBe(false);
    expect(ours.text).toBe(Array.from({ length: 2000 }, (_, index) => `${index + 1}\n`).join(""));
    expect(ours.result?.details).toBeUndefined();
    expect(theirs.text).toMatch(/\[Showing lines 2-2001 of 2001\./);
    // One line more is truncated, by a count that has no phantom line.
    const over = await outcome(createBashTool(env), { command: "seq 2001" });
    expect(over.text).toMatch(/^2\n3\n[\s\S]*\n2001\n\n\n\[Showing lines 2-2001 of 2001\. Full output: /);
  });

  it("passes only allowlisted environment variables to the command", async () => {
    process.env.ARBOR_BASH_SECRET = "hunter2";
    try {
      const command = "echo ${ARBOR_BASH_SECRET:-unset}";
      expect((await outcome(createBashTool(env), { command })).text).toBe("unset\n");
      expect((await piOutcome(pi(), { command })).text).toBe("hunter2\n");
    } finally {
      delete process.env.ARBOR_BASH_SECRET;
    }
  });

  it("keeps late output from background children (pi #5303)", async () => {
    const command = "(sleep 0.8; echo late) & echo early";
    // A generous bound keeps the test robust under load; the tool returns as soon as EOF arrives.
    const ours = await outcome(createBashTool(env, { drainTimeoutMs: 10_000 }), { command });
    const theirs = await piOutcome(pi(), { command });
    expect(ours.text).toBe("early\nlate\n");
    expect(theirs.text).not.toContain("late");
  });

  it("clips a single huge line and spills the full output (pi #5757)", async () => {
    const command = "printf 'needle %0120000d\\n' 0";
    const ours = await outcome(createBashTool(env), { command });
    const theirs = await piOutcome(pi(), { command });
    expect(ours.error).toBe(false);
    expect(ours.text.startsWith("needle 000")).toBe(true);
    expect(ours.text.length).toBeLessThan(2500);
    expect(ours.text).toContain("... [truncated, line is 117.2KB]");
    const details = ours.result?.details as { fullOutputPath: string; clippedLines: number };
    expect(details.clippedLines).toBe(1);
    expect(ours.text).toContain(`Full output: ${details.fullOutputPath}`);
    expect(readFileSync(details.fullOutputPath, "utf8")).toBe(`needle ${"0".repeat(120000)}\n`);
    expect(theirs.text).not.toContain("needle"); // pi shows "(no output)" and a notice
    const noNewline = await piOutcome(pi(), { command: "printf 'needle %0120000d' 0" });
    expect(noNewline.text).not.toContain("needle"); // ... or the last 50KB of the line
    expect(noNewline.text.length).toBeGreaterThan(50_000);
  });

  it("clips a long line in the middle of small output, which pi passes whole", async () => {
    const command = "echo start; printf '%030000d\\n' 7; echo end";
    const ours = await outcome(createBashTool(env), { command });
    const theirs = await piOutcome(pi(), { command });
    expect(ours.text).toMatch(/^start\n0{2000}\.\.\. \[truncated, line is 29\.3KB\]\nend\n\n\n\[1 long line\(s\) clipped to 2000 chars\. Full output: .*\]$/);
    expect(theirs.text).toBe(`start\n${"0".repeat(29999)}7\nend\n`);
  });

  it("kills the whole process group on abort", async () => {
    const controller = new AbortController();
    const pidFile = join(root, "bg.pid");
    let seen = "";
    const running = outcome(
      createBashTool(env),
      { command: `sleep 60 & echo $! > ${pidFile}; echo started; wait` },
      { signal: controller.signal, onUpdate: (partial) => (seen = (partial.content[0] as { text: string }).text) },
    );
    await until(() => seen.includes("started"), "the command to start");
    const pid = Number(readFileSync(pidFile, "utf8"));
    controller.abort();
    const result = await running;
    expect(result.error).toBe(true);
    expect(result.text).toBe("started\n\n\nCommand aborted");
    await until(() => processGone(pid), "the background child to die");
  });

  it("kills the whole process group on timeout", async () => {
    const pidFile = join(root, "bg.pid");
    const result = await outcome(createBashTool(env), { command: `sleep 60 & echo $! > ${pidFile}; wait`, timeout: 1 });
    expect(result.text).toBe("Command timed out after 1 seconds");
    const pid = Number(readFileSync(pidFile, "utf8"));
    await until(() => processGone(pid), "the background child to die");
  });

  it("ends a background child that holds stdout past the output wait, with the call", async () => {
    const pidFile = join(root, "bg.pid");
    const result = await outcome(createBashTool(env, { drainTimeoutMs: 200 }), { command: `sleep 60 & echo $! > ${pidFile}; echo started` });
    expect(result).toMatchObject({ error: false, text: "started\n" });
    const pid = Number(readFileSync(pidFile, "utf8"));
    await until(() => processGone(pid), "the background child to die", 5000);
  });

  it("ends a background child that let go of stdout, with the call", async () => {
    const pidFile = join(root, "bg.pid");
    const result = await outcome(createBashTool(env), { command: `sleep 60 > /dev/null 2>&1 & echo $! > ${pidFile}; echo started` });
    expect(result).toMatchObject({ error: false, text: "started\n" });
    const pid = Number(readFileSync(pidFile, "utf8"));
    await until(() => processGone(pid), "the background child to die", 5000);
  });

  it("refuses to start when already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await outcome(createBashTool(env), { command: `touch ${join(root, "ran")}` }, { signal: controller.signal });
    expect(result.text).toBe("Command aborted");
    expect(existsSync(join(root, "ran"))).toBe(false);
  });
});

describe("bash: streaming", () => {
  const command = "for i in 1 2 3 4; do echo line$i; sleep 0.25; done";

  it("streams partial output before the command ends", async () => {
    const updates: ToolResult[] = [];
    const result = await outcome(createBashTool(env), { command }, { onUpdate: (partial) => updates.push(partial) });
    expect(result.text).toBe("line1\nline2\nline3\nline4\n");
    expect(updates.length).toBeGreaterThanOrEqual(2);
    const first = updates[0].content[0] as { text: string };
    expect(first.text.startsWith("line1")).toBe(true);
    expect(first.text).not.toContain("line4");
  });

  it("throttles updates: with a long interval only the leading update is sent", async () => {
    const updates: ToolResult[] = [];
    await outcome(createBashTool(env, { updateIntervalMs: 600_000 }), { command }, { onUpdate: (partial) => updates.push(partial) });
    expect(updates.length).toBe(1);
  });
});

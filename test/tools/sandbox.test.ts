/**
 * Issue 19 finding 4 (and 3's "keep the key out of the tools' reach"): bash under the bubblewrap
 * sandbox, with real commands. Outside files cannot be read or written, a loopback server outside
 * cannot be reached without `allowNetwork`, the agent's key is not in `/proc`, `env` or any file
 * the command can see, a fork bomb and a long sleep end at their limits, and no child outlives
 * the call. The "none" mode is shown to leak each of these, so the tests can fail.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnvOptions } from "../../src/adapters/execution-env.ts";
import { sandboxLimitSupport } from "../../src/adapters/sandbox.ts";
import { createBashTool } from "../../src/adapters/tools/bash.ts";
import { outcome, tempDir } from "./tool-harness.ts";

const KEY_NAME = "ARBOR_SANDBOX_TEST_KEY";
const KEY = `sk-test-${randomBytes(12).toString("hex")}`;
const hasBwrap = existsSync("/usr/bin/bwrap");

let server: Server;
let port = 0;
beforeAll(async () => {
  process.env[KEY_NAME] = KEY;
  server = createServer((socket) => socket.end("hello from outside\n"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  delete process.env[KEY_NAME];
  await new Promise((resolve) => server.close(resolve));
});

function bash(root: string, options: Partial<ExecutionEnvOptions> = {}) {
  return createBashTool(createExecutionEnv({ root, sandbox: "bubblewrap", ...options }), { drainTimeoutMs: 500 });
}

const SOURCE = join(import.meta.dirname, "../../src/adapters");

/**
 * Runs `command` through the bash tool in a real agent process started with the key in its
 * environment (the default allowlist, so the key is not passed on); returns its output.
 */
function agentRun(root: string, sandbox: "none" | "bubblewrap", command: string): string {
  const script = `
    const { createExecutionEnv } = await import(${JSON.stringify(join(SOURCE, "execution-env.ts"))});
    const { createBashTool } = await import(${JSON.stringify(join(SOURCE, "tools/bash.ts"))});
    const tool = createBashTool(createExecutionEnv({ root: ${JSON.stringify(root)}, sandbox: ${JSON.stringify(sandbox)} }));
    const result = await tool.execute({ command: ${JSON.stringify(command)} }, { toolCallId: "c", signal: new AbortController().signal, onUpdate() {} });
    process.stdout.write(result.content.map((part) => part.text).join("") + "\\n${sandbox === "bubblewrap" ? "sandboxed ok" : "done"}\\n");
  `;
  return execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    env: { ...process.env, [KEY_NAME]: KEY },
    encoding: "utf8",
    timeout: 30_000,
  });
}

/** Live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

describe.skipIf(!hasBwrap)("bash under bubblewrap (issue 19 finding 4)", () => {
  it("cannot read a file outside the root; can read and write inside", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const outside = tempDir("arbor-sandbox-outside-");
    writeFileSync(join(outside, "secret.txt"), "OUTSIDE CONTENT\n");
    const command = `cat ${join(outside, "secret.txt")}; echo inside > made.txt && cat made.txt`;
    const confined = await outcome(bash(root), { command });
    expect(confined.text).not.toContain("OUTSIDE CONTENT");
    expect(confined.text).toContain("inside");
    expect(readFileSync(join(root, "made.txt"), "utf8")).toBe("inside\n");
    const unconfined = await outcome(bash(root, { sandbox: "none" }), { command });
    expect(unconfined.text).toContain("OUTSIDE CONTENT");
  });

  it("cannot write outside the root (an outside folder, the system, /tmp of the host)", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const outside = tempDir("arbor-sandbox-outside-");
    const command = `echo x > ${join(outside, "new.txt")}; echo x > /usr/arbor-sandbox-probe; echo x > /etc/arbor-sandbox-probe; ls ${outside}`;
    const result = await outcome(bash(root), { command });
    expect(result.error).toBe(true);
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
    expect(existsSync("/usr/arbor-sandbox-probe")).toBe(false);
    expect(existsSync("/etc/arbor-sandbox-probe")).toBe(false);
    await outcome(bash(root, { sandbox: "none" }), { command: `echo x > ${join(outside, "new.txt")}` });
    expect(existsSync(join(outside, "new.txt"))).toBe(true);
  });

  it("cannot reach a loopback server outside without allowNetwork", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
    const denied = await outcome(bash(root), { command });
    expect(denied.error).toBe(true);
    expect(denied.text).not.toContain("hello from outside");
    const allowed = await outcome(bash(root, { sandbox: { mode: "bubblewrap", allowNetwork: true } }), { command });
    expect(allowed.text).toContain("hello from outside");
  });

  it("cannot read the agent's key through /proc, env or a file", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const outside = tempDir("arbor-sandbox-outside-");
    writeFileSync(join(outside, "settings.json"), JSON.stringify({ apiKey: KEY }));
    const command = [
      "cat /proc/$PPID/environ",
      "cat /proc/1/environ",
      "for f in /proc/[0-9]*/environ; do cat $f; done",
      "env",
      `cat ${join(outside, "settings.json")}`,
      `grep -rs ${KEY} /tmp /etc /root 2>/dev/null`,
      "true",
    ].join("; ");
    // The key is in the agent process's own start-up environment, as a CLI user's key is.
    const confined = agentRun(root, "bubblewrap", command);
    expect(confined).toContain("sandboxed ok");
    expect(confined).not.toContain(KEY);
    const unconfined = agentRun(root, "none", "cat /proc/$PPID/environ | tr '\\0' '\\n'");
    expect(unconfined).toContain(KEY);
  });

  it("passes only allowlisted variables", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const result = await outcome(bash(root, { envAllowlist: ["PATH", KEY_NAME] }), { command: "env" });
    expect(result.text).toContain(`${KEY_NAME}=${KEY}`);
    const lines = result.text.split("\n").filter((line) => line.includes("="));
    // bash itself adds PWD, SHLVL and _.
    const names = lines.map((line) => line.split("=")[0]).filter((name) => !["PWD", "SHLVL", "_"].includes(name));
    expect(names.sort()).toEqual([KEY_NAME, "PATH"].sort());
  });

  it("ends a 10-minute sleep at the tool's timeout, and no child outlives the call", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const marker = `arbor-sleeper-${randomBytes(4).toString("hex")}`;
    const result = await outcome(bash(root), { command: `(exec -a ${marker} sleep 600) & exec -a ${marker} sleep 600`, timeout: 2 });
    expect(result.error).toBe(true);
    expect(result.text).toContain("Command timed out after 2 seconds");
    await expect.poll(() => processesWith(marker), { timeout: 10_000 }).toEqual([]);
  });

  it("ends background children when the command exits normally", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const marker = `arbor-orphan-${randomBytes(4).toString("hex")}`;
    const result = await outcome(bash(root), { command: `(exec -a ${marker} sleep 600) > /dev/null 2>&1 & echo started` });
    expect(result.text).toContain("started");
    await expect.poll(() => processesWith(marker), { timeout: 10_000 }).toEqual([]);
  });

  it("limits memory", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const command = "s=$(head -c 200000000 /dev/zero | tr '\\0' x); echo length ${#s}";
    const limited = await outcome(bash(root, { sandbox: { mode: "bubblewrap", memoryLimitBytes: 64 * 1024 * 1024 } }), { command });
    expect(limited.error).toBe(true);
    expect(limited.text).not.toContain("length 200000000");
  });

  // A fork bomb is only run where the limit is enforced: unlimited, it would take the shared machine down.
  it.skipIf(sandboxLimitSupport().processLimit === "none")("ends a fork bomb at its process limit and timeout", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const marker = `arbor-bomb-${randomBytes(4).toString("hex")}`;
    const tool = bash(root, { sandbox: { mode: "bubblewrap", processLimit: 64 } });
    const started = Date.now();
    const result = await outcome(tool, { command: `bomb() { bomb | bomb & }; (exec -a ${marker} sleep 600) & bomb; wait`, timeout: 3 });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/timed out|exited with code|fork|Resource temporarily unavailable/);
    expect(Date.now() - started).toBeLessThan(45_000);
    await expect.poll(() => processesWith(marker), { timeout: 10_000 }).toEqual([]);
  });

  it("describes itself for start-up lines, and refuses an unknown mode", () => {
    const root = tempDir();
    expect(createExecutionEnv({ root }).sandbox.describe()).toMatch(/^none \(commands run unconfined/);
    expect(createExecutionEnv({ root, sandbox: "bubblewrap" }).sandbox.describe()).toMatch(/^bubblewrap \(.*no network/);
    expect(() => createExecutionEnv({ root, sandbox: "docker" as never })).toThrow(/unknown/);
    expect(() => createExecutionEnv({ root, sandbox: { mode: "bubblewrap", bwrapPath: "/nonexistent/bwrap" } })).toThrow(/bubblewrap/);
  });

  it("runs a provider function's command", { timeout: 60_000 }, async () => {
    const root = tempDir();
    const tool = createBashTool(
      createExecutionEnv({ root, sandbox: (request) => ({ file: request.shell, args: ["-c", `echo provider; ${request.command}`], env: request.env, cwd: request.cwd }) }),
    );
    expect((await outcome(tool, { command: "echo ran" })).text).toBe("provider\nran\n");
  });
});

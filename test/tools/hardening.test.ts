/**
 * Hardening found by adversarial review: a FIFO is not read (it would block forever),
 * and each ExecutionEnv spills bash output into its own folder that other envs cannot read.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createBashTool } from "../../src/adapters/tools/bash.ts";
import { createReadTool } from "../../src/adapters/tools/read.ts";
import { outcome, tempDir } from "./tool-harness.ts";

describe("tool hardening", () => {
  it("refuses to read a FIFO instead of blocking", async () => {
    const root = tempDir();
    execFileSync("mkfifo", [join(root, "pipe")]);
    const result = await outcome(createReadTool(createExecutionEnv({ root })), { path: "pipe" });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/not a regular file/);
  });

  it("gives each env its own spill folder; one env cannot read another's full output", async () => {
    const rootA = tempDir();
    const rootB = tempDir();
    const envA = createExecutionEnv({ root: rootA });
    const envB = createExecutionEnv({ root: rootB });
    const big = await outcome(createBashTool(envA), { command: "seq 1 5000" });
    const spilled = /Full output: (\S+?)\]/.exec(big.text)?.[1];
    expect(spilled, big.text).toBeDefined();
    expect(envA.spillDir).not.toBe(envB.spillDir);
    const ownRead = await outcome(createReadTool(envA), { path: spilled, offset: 4999 });
    expect(ownRead.error, ownRead.text).toBe(false);
    expect(ownRead.text).toContain("5000");
    const foreignRead = await outcome(createReadTool(envB), { path: spilled });
    expect(foreignRead.error).toBe(true);
    expect(foreignRead.text).toMatch(/outside/i);
  });
});

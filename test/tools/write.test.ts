import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createWriteToolDefinition } from "@mariozechner/pi-coding-agent";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createWriteTool } from "../../src/adapters/tools/write.ts";
import { outcome, piOutcome, runTool, tempDir } from "./tool-harness.ts";

let root: string;
let env: ExecutionEnv;

beforeEach(() => {
  root = tempDir();
  env = createExecutionEnv({ root });
});

describe("write", () => {
  it("reports true UTF-8 byte counts (pi reports UTF-16 length)", async () => {
    const content = "h\u00e9llo \ud83d\ude00\n";
    const ours = await outcome(createWriteTool(env), { path: "a/b/c.txt", content });
    const theirs = await piOutcome(createWriteToolDefinition(root), { path: "p/q/r.txt", content });
    expect(ours.text).toBe(`Successfully wrote ${Buffer.byteLength(content)} bytes to a/b/c.txt`);
    expect(theirs.text).toBe(`Successfully wrote ${content.length} bytes to p/q/r.txt`);
    expect(theirs.text).not.toBe(ours.text.replace("a/b/c.txt", "p/q/r.txt"));
    expect(readFileSync(join(root, "a/b/c.txt"), "utf8")).toBe(content);
  });

  it("creates parent directories and overwrites in place of the old content, keeping mode", async () => {
    mkdirSync(join(root, "bin"));
    writeFileSync(join(root, "bin", "tool"), "old");
    chmodSync(join(root, "bin", "tool"), 0o750);
    await runTool(createWriteTool(env), { path: "bin/tool", content: "new" });
    expect(readFileSync(join(root, "bin", "tool"), "utf8")).toBe("new");
    expect(statSync(join(root, "bin", "tool")).mode & 0o777).toBe(0o750);
    expect(readdirSync(join(root, "bin"))).toEqual(["tool"]); // no temp files left behind
  });

  it("writes through a symlink inside the root to its target, keeping the link", async () => {
    writeFileSync(join(root, "target.txt"), "old");
    symlinkSync("target.txt", join(root, "link.txt"));
    await runTool(createWriteTool(env), { path: "link.txt", content: "via link" });
    expect(lstatSync(join(root, "link.txt")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(root, "target.txt"), "utf8")).toBe("via link");
  });

  it("refuses a dangling symlink pointing outside and creates nothing there", async () => {
    const outside = tempDir();
    symlinkSync(join(outside, "planted.txt"), join(root, "trap.txt"));
    const result = await outcome(createWriteTool(env), { path: "trap.txt", content: "x" });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/outside the root/);
    expect(existsSync(join(outside, "planted.txt"))).toBe(false);
  });

  it("honours an aborted signal without touching the file", async () => {
    writeFileSync(join(root, "keep.txt"), "keep");
    const controller = new AbortController();
    controller.abort();
    const result = await outcome(createWriteTool(env), { path: "keep.txt", content: "x" }, { signal: controller.signal });
    expect(result.text).toBe("Operation aborted");
    expect(readFileSync(join(root, "keep.txt"), "utf8")).toBe("keep");
  });

  it("serializes concurrent writes per file: each completed write is whole", async () => {
    const tool = createWriteTool(env);
    const contents = Array.from({ length: 12 }, (_, index) => `${index}`.repeat(20000));
    await Promise.all(contents.map((content) => runTool(tool, { path: "big.txt", content })));
    expect(contents).toContain(readFileSync(join(root, "big.txt"), "utf8"));
    expect(readdirSync(root)).toEqual(["big.txt"]);
  });

  it("names the bad field on invalid arguments", async () => {
    const result = await outcome(createWriteTool(env), { path: "x.txt" });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/content/);
  });
});

/**
 * Issue 19 finding 1: the file tools under a swapping-symlink race. A real child process swaps
 * `root/racydir` between a real directory and a symlink to a folder outside the root, as fast
 * as it can, while each tool is called 3,000 times. Zero calls may read, list or write outside;
 * no temp file may be left outside. Every write reported as a success must be inside the root.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createEditTool } from "../../src/adapters/tools/edit.ts";
import { createFindTool } from "../../src/adapters/tools/find.ts";
import { createGrepTool } from "../../src/adapters/tools/grep.ts";
import { createLsTool } from "../../src/adapters/tools/ls.ts";
import { createReadTool } from "../../src/adapters/tools/read.ts";
import { createWriteTool } from "../../src/adapters/tools/write.ts";
import type { AgentTool } from "../../src/core/tools.ts";
import { outcome, tempDir } from "./tool-harness.ts";

const ITERATIONS = 3000;
const CONCURRENCY = 4;
const SECRET = "OUTSIDE-SECRET-7f3a";

/**
 * The swapper: renames the real directory away, puts a symlink to `outside` in its place,
 * removes it and renames the directory back, until killed. A directory a tool created in the gap
 * (write makes missing parents) is moved aside inside the root, so nothing written is lost.
 * Its loop never yields to the event loop, so it watches for itself (every 100 ms): it exits
 * once its parent is gone (its parent pid is no longer the test process's, given as the last
 * argument: it was re-parented; or, off Linux, that pid no longer answers signal 0), and after
 * SWAPPER_DEADLINE_MS in any case (longer than any test's timeout), so a test run killed from
 * outside never leaves it spinning.
 */
const SWAPPER_DEADLINE_MS = 150_000;
const SWAPPER = `
const fs = require("node:fs");
const [racy, hold, outside, aside, spawner] = process.argv.slice(1);
// The test process's pid, given: a swapper started as its parent died is re-parented already.
const parent = Number(spawner);
const deadline = Date.now() + ${SWAPPER_DEADLINE_MS};
const currentParent = () => {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    try { process.kill(parent, 0); return parent; } catch { return -1; }
  }
};
let checked = 0;
let n = 0;
process.stdout.write("ready\\n");
for (;;) {
  if (Date.now() - checked >= 100) {
    checked = Date.now();
    if (checked > deadline || currentParent() !== parent) process.exit(3);
  }
  try {
    fs.renameSync(racy, hold);
    try { fs.symlinkSync(outside, racy); } catch (e) { if (e.code !== "EEXIST") throw e; fs.renameSync(racy, aside + "/" + n++); continue; }
    fs.unlinkSync(racy);
    fs.renameSync(hold, racy);
  } catch (e) {
    if (e.code === "ENOENT" && fs.existsSync(hold)) {
      try { fs.renameSync(hold, racy); } catch { fs.renameSync(racy, aside + "/" + n++); }
    } else if (e.code !== "ENOENT") { try { fs.renameSync(racy, aside + "/" + n++); } catch {} }
  }
}
`;

interface Arena {
  root: string;
  outside: string;
  env: ExecutionEnv;
  swapper: ChildProcess;
}

const swappers: ChildProcess[] = [];
afterEach(() => {
  for (const child of swappers.splice(0)) child.kill("SIGKILL");
});

async function arena(files: Record<string, string>, outsideFiles: Record<string, string>): Promise<Arena> {
  const root = tempDir("arbor-race-root-");
  const outside = tempDir("arbor-race-outside-");
  mkdirSync(join(root, "racydir"));
  mkdirSync(join(root, ".aside"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, "racydir", name), text);
  for (const [name, text] of Object.entries(outsideFiles)) writeFileSync(join(outside, name), text);
  const swapper = spawn(process.execPath, ["-e", SWAPPER, join(root, "racydir"), join(root, ".hold"), outside, join(root, ".aside"), String(process.pid)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  swappers.push(swapper);
  await new Promise<void>((resolve, reject) => {
    swapper.stdout!.once("data", () => resolve());
    swapper.once("exit", (code) => reject(new Error(`swapper exited with ${code}`)));
  });
  return { root, outside, env: createExecutionEnv({ root }), swapper };
}

/** Stops the swapper and puts the real directory back at `root/racydir`. */
async function stop(swapper: ChildProcess, root: string): Promise<void> {
  if (swapper.exitCode === null && swapper.signalCode === null) {
    const exited = new Promise((resolve) => swapper.once("exit", resolve));
    swapper.kill("SIGKILL");
    await exited;
  }
  const racy = join(root, "racydir");
  if (lstatSync(racy, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(racy);
  if (existsSync(join(root, ".hold"))) renameSync(join(root, ".hold"), racy);
}

/** Calls `tool` ITERATIONS times (CONCURRENCY at a time) with `args(i)`; returns every outcome. */
async function hammer(tool: AgentTool<any, any>, args: (index: number) => unknown) {
  const outcomes: { index: number; error: boolean; text: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ITERATIONS) {
      const index = next++;
      const result = await outcome(tool, args(index));
      outcomes.push({ index, error: result.error, text: result.text });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return outcomes;
}

function listRecursive(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: "utf8" }).sort();
}

describe("file tools under a swapping symlink (issue 19 finding 1)", () => {
  it("write: no file and no temp file lands outside; every success is inside", { timeout: 120_000 }, async () => {
    const { root, outside, swapper } = await arena({ "keep.txt": "inside" }, { "secret.txt": SECRET });
    const write = createWriteTool(createExecutionEnv({ root }));
    const outcomes = await hammer(write, (index) => ({ path: `racydir/w-${index}.txt`, content: `w${index}` }));
    await stop(swapper, root);
    // The tool works on the real directory: some call during the race wrote, or (on a machine so
    // loaded that the swapper won every call) a call once the swapping stopped does.
    if (!outcomes.some((result) => !result.error)) {
      const after = await outcome(write, { path: `racydir/w-${ITERATIONS}.txt`, content: `w${ITERATIONS}` });
      expect(after.error, after.text).toBe(false);
      outcomes.push({ index: ITERATIONS, error: false, text: after.text });
    }
    expect(listRecursive(outside)).toEqual(["secret.txt"]);
    const inside = new Set(listRecursive(root).map((path) => path.split("/").pop()));
    const succeeded = outcomes.filter((result) => !result.error);
    for (const result of succeeded) expect(inside.has(`w-${result.index}.txt`), `write ${result.index} reported success`).toBe(true);
    expect([...inside].filter((name) => name?.endsWith(".tmp"))).toEqual([]);
  });

  it("edit: the outside file is never changed and no temp file lands outside", { timeout: 120_000 }, async () => {
    const original = `${SECRET}\nmarker\n`;
    const { root, outside, env, swapper } = await arena({ "e.txt": "inside\nmarker\n" }, { "e.txt": original });
    const edit = createEditTool(env);
    const editArgs = { path: "racydir/e.txt", edits: [{ oldText: "marker", newText: "marker\nm" }] };
    const outcomes = await hammer(edit, () => editArgs);
    await stop(swapper, root);
    // As for write: an edit after the swapping stopped succeeds when the swapper won every call.
    if (!outcomes.some((result) => !result.error)) {
      const after = await outcome(edit, editArgs);
      expect(after.error, after.text).toBe(false);
      outcomes.push({ index: ITERATIONS, error: false, text: after.text });
    }
    expect(listRecursive(outside)).toEqual(["e.txt"]);
    expect(readFileSync(join(outside, "e.txt"), "utf8")).toBe(original);
    expect(outcomes.filter((result) => result.text.includes(SECRET))).toEqual([]);
    const succeeded = outcomes.filter((result) => !result.error).length;
    // Every successful edit added one "m" line to the one inside file (none lost, none elsewhere).
    const edited = readFileSync(join(root, "racydir", "e.txt"), "utf8");
    expect(edited).toBe(`inside\nmarker\n${"m\n".repeat(succeeded)}`);
    expect(listRecursive(root).filter((path) => path.endsWith(".tmp"))).toEqual([]);
  });

  it.each([
    ["read", (env: ExecutionEnv) => createReadTool(env), () => ({ path: "racydir/target.txt" })],
    ["grep a directory", (env: ExecutionEnv) => createGrepTool(env), () => ({ pattern: "SECRET|inside", path: "racydir" })],
    ["grep a file", (env: ExecutionEnv) => createGrepTool(env), () => ({ pattern: "SECRET|inside", path: "racydir/target.txt" })],
    ["ls", (env: ExecutionEnv) => createLsTool(env), () => ({ path: "racydir" })],
    ["find the root", (env: ExecutionEnv) => createFindTool(env), () => ({ pattern: "*" })],
    ["find the directory", (env: ExecutionEnv) => createFindTool(env), () => ({ pattern: "*", path: "racydir" })],
  ] as const)("%s never shows outside content or names", { timeout: 120_000 }, async (_name, make, args) => {
    const { root, env, swapper } = await arena({ "target.txt": "inside\n" }, { "target.txt": `${SECRET}\n`, "outside-only-name.txt": SECRET });
    const outcomes = await hammer(make(env), args);
    await stop(swapper, root);
    const leaks = outcomes.filter((result) => result.text.includes(SECRET) || result.text.includes("outside-only-name"));
    expect(leaks.length, leaks[0]?.text).toBe(0);
    // The tool works on the real directory: some call during the race saw it, or (on a machine so
    // loaded that the swapper won every round) a call once the swapping stopped does.
    const sawInside = (result: { error: boolean; text: string }) => !result.error && (result.text.includes("target.txt") || result.text.includes("inside"));
    if (!outcomes.some(sawInside)) {
      const after = await outcome(make(env), args());
      expect(after.text).not.toContain(SECRET);
      expect(sawInside(after), after.text).toBe(true);
    }
  });
});

import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecutionEnv, DEFAULT_ENV_ALLOWLIST } from "../../src/adapters/execution-env.ts";
import { HarnessConfigError, PathEscapeError } from "../../src/core/errors.ts";
import { tempDir } from "./tool-harness.ts";

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
  base = tempDir();
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(join(root, "sub", "deep"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, "inside.txt"), "in");
  writeFileSync(join(outside, "secret.txt"), "secret");
  mkdirSync(join(base, "root-evil"));
});

async function refused(path: string, env = createExecutionEnv({ root })) {
  const error = await env.resolvePath(path).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(PathEscapeError.isInstance(error), `expected ${JSON.stringify(path)} to be refused`).toBe(true);
  return error as InstanceType<typeof PathEscapeError>;
}

describe("ExecutionEnv path resolution", () => {
  it("resolves relative paths against cwd, strips @, and returns canonical paths", async () => {
    const env = createExecutionEnv({ root, cwd: "sub" });
    expect(env.cwd).toBe(join(root, "sub"));
    expect(await env.resolvePath("deep/x.ts")).toBe(join(root, "sub", "deep", "x.ts"));
    expect(await env.resolvePath("@../inside.txt")).toBe(join(root, "inside.txt"));
    expect(await env.resolvePath(join(root, "inside.txt"))).toBe(join(root, "inside.txt"));
    expect(await env.resolvePath("new/dir/file.txt")).toBe(join(root, "sub", "new", "dir", "file.txt"));
    expect(await env.resolvePath("a\u00A0b.txt")).toBe(join(root, "sub", "a b.txt"));
  });

  it("expands ~ to the home directory as pi does", async () => {
    const previous = process.env.HOME;
    process.env.HOME = root;
    try {
      expect(homedir()).toBe(root);
      const env = createExecutionEnv({ root, cwd: "sub" });
      expect(await env.resolvePath("~/inside.txt")).toBe(join(root, "inside.txt"));
      expect(await env.resolvePath("~")).toBe(root);
      expect(await env.resolvePath("@~/inside.txt")).toBe(join(root, "inside.txt"));
    } finally {
      process.env.HOME = previous;
    }
  });

  it("follows symlinks that stay inside the root", async () => {
    symlinkSync(join(root, "sub"), join(root, "sublink"));
    const env = createExecutionEnv({ root });
    expect(await env.resolvePath("sublink/deep")).toBe(join(root, "sub", "deep"));
  });
});

describe("ExecutionEnv escape attempts (each must be refused)", () => {
  it("1: parent directory", async () => {
    const error = await refused("../outside/secret.txt");
    expect(error.message).toContain("../outside/secret.txt");
    expect(error.message).toContain(root);
  });
  it("2: many parent directories", () => refused("../../../../../../etc/passwd"));
  it("3: absolute path", () => refused("/etc/passwd"));
  it("4: descent then climb out", () => refused("sub/deep/../../../outside/secret.txt"));
  it("5: climb out from a nested cwd", () => refused("../../../outside", createExecutionEnv({ root, cwd: "sub/deep" })));
  it("6: @-prefixed parent path", () => refused("@../outside/secret.txt"));
  it("7: sibling directory sharing the root's name as a prefix", () => refused("../root-evil/x.txt"));
  it("8: the root's parent as an absolute path", () => refused(base));
  it("9: home directory via ~", async () => {
    const previous = process.env.HOME;
    process.env.HOME = outside;
    try {
      await refused("~/secret.txt");
      await refused("~");
    } finally {
      process.env.HOME = previous;
    }
  });
  it("10: NUL byte", () => refused("inside.txt\0.png"));
  it("11: NUL byte hidden in a directory part", () => refused("sub/\0/../inside.txt"));
  it("12: symlink to a directory outside", async () => {
    symlinkSync(outside, join(root, "link"));
    await refused("link/secret.txt");
    await refused("link");
  });
  it("13: symlink to a file outside", async () => {
    symlinkSync(join(outside, "secret.txt"), join(root, "innocent.txt"));
    await refused("innocent.txt");
  });
  it("14: relative symlink climbing out", async () => {
    symlinkSync("../../outside", join(root, "sub", "rel"));
    await refused("sub/rel/secret.txt");
  });
  it("15: dangling symlink whose target (to be created) is outside", async () => {
    symlinkSync(join(outside, "created-by-write.txt"), join(root, "dangling.txt"));
    await refused("dangling.txt");
  });
  it("16: new file below a symlinked directory outside", async () => {
    symlinkSync(outside, join(root, "out"));
    await refused("out/new/dir/file.txt");
  });
  it("17: chain of symlinks ending outside", async () => {
    symlinkSync(outside, join(root, "c"));
    symlinkSync(join(root, "c"), join(root, "b"));
    symlinkSync("b", join(root, "a"));
    await refused("a/secret.txt");
  });
  it("18: symlink created during the run (directory swapped for a link)", async () => {
    const env = createExecutionEnv({ root });
    expect(await env.resolvePath("sub/deep/file.txt")).toBe(join(root, "sub", "deep", "file.txt"));
    rmSync(join(root, "sub", "deep"), { recursive: true });
    symlinkSync(outside, join(root, "sub", "deep"));
    await refused("sub/deep/file.txt", env);
  });
  it("19: symlink loop gives a clear error, not a hang", async () => {
    symlinkSync("loop2", join(root, "loop1"));
    symlinkSync("loop1", join(root, "loop2"));
    await expect(createExecutionEnv({ root }).resolvePath("loop1/x")).rejects.toThrow();
  });
  it("20: a cwd outside the root is refused at creation", () => {
    expect(() => createExecutionEnv({ root, cwd: outside })).toThrow(PathEscapeError);
    expect(() => createExecutionEnv({ root, cwd: "../outside" })).toThrow(PathEscapeError);
  });
});

describe("ExecutionEnv policy switches", () => {
  it("allowOutsideRoot lets escapes through, but never NUL bytes", async () => {
    symlinkSync(outside, join(root, "link"));
    const env = createExecutionEnv({ root, allowOutsideRoot: true });
    expect(await env.resolvePath("../outside/secret.txt")).toBe(join(outside, "secret.txt"));
    expect(await env.resolvePath("link/secret.txt")).toBe(join(outside, "secret.txt"));
    await refused("a\0b", env);
  });

  it("reads (only reads) may reach the spill directory once it exists", async () => {
    const env = createExecutionEnv({ root, spillDir: join(base, "spill") });
    const spill = env.ensureSpillDir();
    writeFileSync(join(spill, "out.log"), "x");
    expect(await env.resolvePath(join(spill, "out.log"), "read")).toBe(join(spill, "out.log"));
    await refused(join(spill, "out.log"));
  });

  it("rejects a missing root or cwd with HarnessConfigError", () => {
    expect(() => createExecutionEnv({ root: join(base, "nope") })).toThrow(HarnessConfigError);
    expect(() => createExecutionEnv({ root, cwd: "nope" })).toThrow(HarnessConfigError);
    expect(() => createExecutionEnv({ root: join(root, "inside.txt") })).toThrow(/not a directory/);
  });

  it("childEnv passes only allowlisted variables plus overrides", () => {
    process.env.ARBOR_TEST_SECRET = "s3cret";
    process.env.LC_ARBOR_TEST = "C";
    try {
      const env = createExecutionEnv({ root, env: { EXTRA: "1" } });
      const child = env.childEnv();
      expect(child.ARBOR_TEST_SECRET).toBeUndefined();
      expect(child.LC_ARBOR_TEST).toBe("C");
      expect(child.PATH).toBe(process.env.PATH);
      expect(child.EXTRA).toBe("1");
      expect(DEFAULT_ENV_ALLOWLIST).toContain("PATH");
      const custom = createExecutionEnv({ root, envAllowlist: ["ARBOR_TEST_SECRET"] }).childEnv();
      expect(custom).toEqual({ ARBOR_TEST_SECRET: "s3cret" });
    } finally {
      delete process.env.ARBOR_TEST_SECRET;
      delete process.env.LC_ARBOR_TEST;
    }
  });
});

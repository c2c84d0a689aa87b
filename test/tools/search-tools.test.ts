import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createLsToolDefinition } from "@mariozechner/pi-coding-agent";
import { beforeEach, describe, expect, it } from "vitest";
import { createExecutionEnv, type ExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createFindTool } from "../../src/adapters/tools/find.ts";
import { createGrepTool } from "../../src/adapters/tools/grep.ts";
import { createLsTool } from "../../src/adapters/tools/ls.ts";
import { PathEscapeError } from "../../src/core/errors.ts";
import { outcome, piOutcome, tempDir } from "./tool-harness.ts";

let root: string;
let env: ExecutionEnv;

function files(tree: Record<string, string>) {
  for (const [path, content] of Object.entries(tree)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

beforeEach(() => {
  root = tempDir();
  env = createExecutionEnv({ root });
  files({
    ".gitignore": "node_modules/\n*.log\n!keep.log\ndist\n",
    ".env.example": "TOKEN=\n",
    "keep.log": "kept TODO\n",
    "debug.log": "ignored TODO\n",
    "README.md": "# Title\nTODO: write docs\n",
    "src/index.ts": "export const a = 1;\n// TODO first\nconst b = 2;\nconst c = 3;\n// TODO second\n",
    "src/util.spec.ts": "it('works', () => {}); // todo lower\n",
    "src/.gitignore": "generated/\n",
    "src/generated/out.ts": "// TODO generated\n",
    "node_modules/pkg/index.ts": "// TODO dependency\n",
    "dist/bundle.js": "// TODO built\n",
    ".git/config": "[core] TODO\n",
  });
});

describe("find", () => {
  it("matches base names at any depth, honours .gitignore (nested, negated), includes hidden files", async () => {
    expect((await outcome(createFindTool(env), { pattern: "*.ts" })).text).toBe("src/index.ts\nsrc/util.spec.ts");
    expect((await outcome(createFindTool(env), { pattern: "*.log" })).text).toBe("keep.log");
    expect((await outcome(createFindTool(env), { pattern: ".env*" })).text).toBe(".env.example");
    expect((await outcome(createFindTool(env), { pattern: "src/**/*.spec.ts" })).text).toBe("src/util.spec.ts");
    expect((await outcome(createFindTool(env), { pattern: "*", path: "src" })).text).toBe(".gitignore\nindex.ts\nutil.spec.ts");
    expect((await outcome(createFindTool(env), { pattern: "src" })).text).toBe("src/");
  });

  it("says when nothing matches and names the limit", async () => {
    expect((await outcome(createFindTool(env), { pattern: "*.rs" })).text).toBe("No files found matching pattern");
    const limited = await outcome(createFindTool(env), { pattern: "*", limit: 2 });
    expect(limited.text).toBe(".env.example\n.gitignore\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]");
    expect(limited.result?.details).toEqual({ resultLimitReached: 2 });
  });

  it("needs no fd on PATH and refuses patterns or paths that leave the root", async () => {
    const previous = process.env.PATH;
    process.env.PATH = "";
    try {
      expect((await outcome(createFindTool(env), { pattern: "*.md" })).text).toBe("README.md");
    } finally {
      process.env.PATH = previous;
    }
    expect((await outcome(createFindTool(env), { pattern: "../*" })).text).toMatch(/must be relative/);
    const escaped = await outcome(createFindTool(env), { pattern: "*", path: ".." });
    expect(PathEscapeError.isInstance((escaped as { thrown?: unknown }).thrown)).toBe(true);
    expect((await outcome(createFindTool(env), { pattern: "*", path: "nope" })).text).toBe(`Path not found: ${join(root, "nope")}`);
  });
});

describe("grep", () => {
  it("finds matches in pi's format, honouring .gitignore and skipping .git", async () => {
    const result = await outcome(createGrepTool(env), { pattern: "TODO" });
    expect(result.text).toBe(["README.md:2: TODO: write docs", "keep.log:1: kept TODO", "src/index.ts:2: // TODO first", "src/index.ts:5: // TODO second"].join("\n"));
  });

  it("supports ignoreCase, literal, glob and a file path", async () => {
    expect((await outcome(createGrepTool(env), { pattern: "todo", ignoreCase: true, glob: "*.spec.ts" })).text).toBe(
      "src/util.spec.ts:1: it('works', () => {}); // todo lower",
    );
    expect((await outcome(createGrepTool(env), { pattern: "() => {}", literal: true })).text).toBe("src/util.spec.ts:1: it('works', () => {}); // todo lower");
    expect((await outcome(createGrepTool(env), { pattern: "const [bc]", path: "src/index.ts" })).text).toBe("index.ts:3: const b = 2;\nindex.ts:4: const c = 3;");
  });

  it("merges overlapping context windows", async () => {
    const result = await outcome(createGrepTool(env), { pattern: "TODO", path: "src", context: 1 });
    expect(result.text).toBe(["index.ts-1- export const a = 1;", "index.ts:2: // TODO first", "index.ts-3- const b = 2;", "index.ts-4- const c = 3;", "index.ts:5: // TODO second"].join("\n"));
  });

  it("reports the match limit, clips long lines, skips binary files and links leaving the root", async () => {
    files({ "many.txt": Array.from({ length: 5 }, (_, index) => `hit ${index}`).join("\n"), "long.txt": `hit ${"x".repeat(600)}\n` });
    writeFileSync(join(root, "blob.bin"), Buffer.from([0x68, 0x69, 0x74, 0x00, 0x01]));
    const outside = tempDir();
    writeFileSync(join(outside, "secret.txt"), "hit secret\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    const limited = await outcome(createGrepTool(env), { pattern: "^hit \\d", limit: 3 });
    expect(limited.text).toBe("many.txt:1: hit 0\nmany.txt:2: hit 1\nmany.txt:3: hit 2\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]");
    const long = await outcome(createGrepTool(env), { pattern: "hit", glob: "long.txt" });
    expect(long.text).toBe(`long.txt:1: hit ${"x".repeat(496)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`);
    const all = await outcome(createGrepTool(env), { pattern: "hit" });
    expect(all.text).not.toContain("blob.bin");
    expect(all.text).not.toContain("secret");
  });

  it("explains bad patterns and empty results", async () => {
    expect((await outcome(createGrepTool(env), { pattern: "(unclosed" })).text).toMatch(/^Invalid regular expression "\(unclosed"/);
    expect((await outcome(createGrepTool(env), { pattern: "nothing-here" })).text).toBe("No matches found");
  });
});

describe("ls", () => {
  it("equals pi's output on a directory without ignored entries", async () => {
    files({ "plain/B.txt": "", "plain/a.txt": "", "plain/.hidden": "", "plain/sub/x": "" });
    for (const params of [{ path: "plain" }, { path: "plain", limit: 2 }, { path: "src/index.ts" }, { path: "missing" }]) {
      const ours = await outcome(createLsTool(env), params);
      const theirs = await piOutcome(createLsToolDefinition(root), params);
      expect({ error: ours.error, text: ours.text }).toEqual({ error: theirs.error, text: theirs.text });
    }
  });

  it("hides gitignored entries and says how many (pi lists them)", async () => {
    const ours = await outcome(createLsTool(env), {});
    expect(ours.text).toBe(".env.example\n.git/\n.gitignore\nkeep.log\nREADME.md\nsrc/\n\n[3 gitignored entries hidden]");
    const theirs = await piOutcome(createLsToolDefinition(root), {});
    expect(theirs.text).toContain("node_modules/");
    expect((await outcome(createLsTool(env), { path: "node_modules" })).text).toBe("pkg/");
  });
});

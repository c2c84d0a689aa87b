/**
 * Issue 19 finding 2: a hard link inside the root to a file outside it (`ln /outside/secret
 * root/h`) cannot be seen by any path check. read, grep and edit refuse regular files with more
 * than one link unless the env's `allowHardLinks` option says otherwise, and the error names it.
 */
import { linkSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createExecutionEnv } from "../../src/adapters/execution-env.ts";
import { createEditTool } from "../../src/adapters/tools/edit.ts";
import { createGrepTool } from "../../src/adapters/tools/grep.ts";
import { createReadTool } from "../../src/adapters/tools/read.ts";
import { outcome, tempDir } from "./tool-harness.ts";

const SECRET = "OUTSIDE-HARDLINK-SECRET";

function setup() {
  const root = tempDir("arbor-hardlink-root-");
  const outside = tempDir("arbor-hardlink-outside-");
  writeFileSync(join(outside, "secret.txt"), `${SECRET}\n`);
  linkSync(join(outside, "secret.txt"), join(root, "h"));
  writeFileSync(join(root, "plain.txt"), "plain inside\n");
  return { root, outside };
}

describe("hard links (issue 19 finding 2)", () => {
  it("read refuses a hard-linked file and names the option", async () => {
    const { root } = setup();
    const result = await outcome(createReadTool(createExecutionEnv({ root })), { path: "h" });
    expect(result.error).toBe(true);
    expect(result.text).not.toContain(SECRET);
    expect(result.text).toMatch(/2 hard links/);
    expect(result.text).toContain("allowHardLinks");
  });

  it("grep skips it in a directory search and refuses it as a file", async () => {
    const { root } = setup();
    const grep = createGrepTool(createExecutionEnv({ root }));
    const inDirectory = await outcome(grep, { pattern: "SECRET|inside" });
    expect(inDirectory.error).toBe(false);
    expect(inDirectory.text).toContain("plain.txt:1: plain inside");
    expect(inDirectory.text).not.toContain(SECRET);
    const asFile = await outcome(grep, { pattern: "SECRET", path: "h" });
    expect(asFile.error).toBe(true);
    expect(asFile.text).toContain("allowHardLinks");
    expect(asFile.text).not.toContain(SECRET);
  });

  it("edit refuses it and leaves the outside file alone", async () => {
    const { root, outside } = setup();
    const result = await outcome(createEditTool(createExecutionEnv({ root })), { path: "h", edits: [{ oldText: "OUTSIDE", newText: "CHANGED" }] });
    expect(result.error).toBe(true);
    expect(result.text).toContain("allowHardLinks");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe(`${SECRET}\n`);
  });

  it("reads it when allowHardLinks is set", async () => {
    const { root } = setup();
    const env = createExecutionEnv({ root, allowHardLinks: true });
    expect((await outcome(createReadTool(env), { path: "h" })).text).toBe(`${SECRET}\n`);
    expect((await outcome(createGrepTool(env), { pattern: "SECRET" })).text).toContain(`h:1: ${SECRET}`);
  });
});

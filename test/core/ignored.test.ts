/**
 * Errors dropped on purpose (`src/core/ignored.ts`): each drop is counted by its reason and written
 * to the `arbor` debug log when `NODE_DEBUG` names it, and only then.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ignored, ignoredErrorCount, ignoreError } from "../../src/core/ignored.ts";

/** Runs a child node that drops one error, with `NODE_DEBUG` set to `debug`. */
function dropInChild(debug: string | undefined): string {
  const script = `import("./src/core/ignored.ts").then(({ ignoreError }) => ignoreError("a test drop")(new Error("boom")))`;
  const env = { ...process.env };
  delete env.NODE_DEBUG;
  if (debug !== undefined) env.NODE_DEBUG = debug;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { env, encoding: "utf8" });
  expect(child.status).toBe(0);
  return child.stderr;
}

describe("ignored errors", () => {
  it("counts each drop by its reason and in all", async () => {
    const before = ignoredErrorCount();
    const drop = ignoreError("count test: a closed handle");
    await expect(Promise.reject(new Error("EBADF")).catch(drop)).resolves.toBeUndefined();
    await expect(Promise.reject(new Error("EBADF")).then(() => true, ignoreError("count test: a closed handle", false))).resolves.toBe(false);
    ignored("count test: an observer threw", "not an Error");
    expect(ignoredErrorCount("count test: a closed handle")).toBe(2);
    expect(ignoredErrorCount("count test: an observer threw")).toBe(1);
    expect(ignoredErrorCount("count test: never dropped")).toBe(0);
    expect(ignoredErrorCount() - before).toBe(3);
  });

  it("writes each drop to the arbor debug log with its reason and message", () => {
    expect(dropInChild("arbor")).toMatch(/^ARBOR \d+: ignored error \(a test drop\): boom\n$/);
    expect(dropInChild("net,arbor")).toContain("ignored error (a test drop): boom");
  });

  it("writes nothing when NODE_DEBUG does not name arbor", () => {
    expect(dropInChild(undefined)).toBe("");
    expect(dropInChild("net")).toBe("");
  });
});

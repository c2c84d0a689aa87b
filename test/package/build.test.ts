/**
 * The package build's JavaScript (`scripts/package-build.config.ts`, P11 cold import), built here
 * into a temporary folder: one file per entry point of package.json `exports` and the CLI, every
 * other file one folder below `dist/` (so `src/http/inspector-assets.ts` and `src/cli/main.ts`,
 * which find the inspector page and package.json relative to their own URL, still do: checked
 * end to end in a fresh process), and the root entry's own code read from a few dozen files
 * instead of one per source module.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageEntries } from "../../scripts/package-build.config.ts";

/** The files of the root entry's own code when this was written: 47; a small margin. One per source module would be about 240. */
const MAX_ROOT_FILES = 55;
const VERSION = "0.0.0-build-test";

const repo = resolve(import.meta.dirname, "../..");
let folder = "";
let dist = "";

/** Runs `script` (ESM) in a fresh Node process in the build's folder; returns its last stdout line. */
function runIn(script: string): string {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: folder, encoding: "utf8" });
  return out.trim().split("\n").pop() ?? "";
}

describe("the package build", () => {
  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "arbor-build-"));
    dist = join(folder, "dist");
    // A package of its own beside the repository's node_modules, as an installed Arbor is.
    writeFileSync(join(folder, "package.json"), JSON.stringify({ name: "arbor-build-test", version: VERSION, type: "module" }));
    symlinkSync(join(repo, "node_modules"), join(folder, "node_modules"), "dir");
    await build({ configFile: join(repo, "scripts/package-build.config.ts"), logLevel: "error", build: { outDir: dist, emptyOutDir: true } });
  }, 120_000);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it("writes one file per entry point and every other file one folder below dist/", () => {
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".js"));
    expect(Object.keys(packageEntries)).toContain("index");
    expect(Object.keys(packageEntries)).toContain("cli/main");
    for (const name of Object.keys(packageEntries)) expect(files).toContain(`${name}.js`);
    expect(files.filter((file) => file !== "index.js" && file.split("/").length !== 2)).toEqual([]);
  });

  it("loads the root entry's own code from a few files", () => {
    const script = `
      import { registerHooks } from "node:module";
      const files = [];
      registerHooks({ load(url, context, next) { if (url.startsWith(${JSON.stringify(pathToFileURL(dist).href)})) files.push(url); return next(url, context); } });
      const arbor = await import(${JSON.stringify(pathToFileURL(join(dist, "index.js")).href)});
      console.log(JSON.stringify({ files: files.length, createHarness: typeof arbor.createHarness }));`;
    const loaded = JSON.parse(runIn(script)) as { files: number; createHarness: string };
    expect(loaded.createHarness).toBe("function");
    expect(loaded.files).toBeGreaterThan(1);
    expect(loaded.files).toBeLessThanOrEqual(MAX_ROOT_FILES);
  });

  it("finds package.json and the inspector page relative to the built modules", async () => {
    const main = pathToFileURL(join(dist, "cli/main.js")).href;
    expect(runIn(`const { main } = await import(${JSON.stringify(main)}); await main(["node", "arbor", "--version"]);`)).toBe(VERSION);
    const script = `
      const { createMemoryEventLog, createSessionRepository } = await import(${JSON.stringify(pathToFileURL(join(dist, "index.js")).href)});
      const { createChatHandler } = await import(${JSON.stringify(pathToFileURL(join(dist, "api/http.js")).href)});
      const handler = createChatHandler({ repository: createSessionRepository({ log: createMemoryEventLog() }) });
      const response = await handler(new Request("http://localhost/inspector"));
      console.log(JSON.stringify({ status: response.status, text: await response.text() }));`;
    const page = JSON.parse(runIn(script)) as { status: number; text: string };
    // This build has no inspector page: the 503 names the file it looked for.
    expect(page.status).toBe(503);
    expect(page.text).toContain(`no ${join(dist, "inspector", "index.html")})`);
  });
});

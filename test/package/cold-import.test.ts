/**
 * What `import("arbor-agent")` loads: only what a harness on SQLite needs before its first model
 * call. PostgreSQL, MCP, ajv, YAML, the model providers (OpenAI's too, on a model's first call), the tools' file-type, diff and
 * glob packages, the OpenTelemetry API (telemetry is on by default) and rxjs (`src/core/rx.ts`) load on first use. A fresh Node process imports the root entry's source
 * (`--experimental-transform-types`, so CommonJS packages load as they do from `dist/`) and counts
 * every module a `module.registerHooks` load hook sees, by package.
 */
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";

/** Modules loaded from each package of node_modules by `import(entry)` in a fresh process. */
function packagesLoadedBy(entry: string): Record<string, number> {
  const script = `
    import { registerHooks } from "node:module";
    const counts = {};
    registerHooks({ load(url, context, next) {
      const name = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1];
      if (name !== undefined) counts[name] = (counts[name] ?? 0) + 1;
      return next(url, context);
    } });
    await import(${JSON.stringify(pathToFileURL(entry).href)});
    console.log(JSON.stringify(counts));`;
  const out = execFileSync(process.execPath, ["--experimental-transform-types", "--no-warnings", "--input-type=module", "-e", script], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop() ?? "{}") as Record<string, number>;
}

/** The packages the root entry may load: the AI SDK and the core. */
const ALLOWED = [
  "ai",
  "@ai-sdk/provider",
  "@ai-sdk/provider-utils",
  "@ai-sdk/gateway",
  "@vercel/oidc",
  "@workflow/serde",
  "eventsource-parser",
  "zod",
  "xstate",
  "@xstate/store",
  "better-sqlite3",
  "fastest-levenshtein",
];

/** Packages that must load only when their subsystem is used. */
const LAZY = [
  "pg",
  "pg-pool",
  "@modelcontextprotocol/sdk",
  "zod-to-json-schema",
  "ajv",
  "yaml",
  "@ai-sdk/openai",
  "@ai-sdk/anthropic",
  "@ai-sdk/google",
  "file-type",
  "strtok3",
  "diff",
  "tinyglobby",
  "@opentelemetry/api",
  "ignore",
  "rxjs",
];

/** 153 modules from node_modules when this was written (zod 106; rxjs and @ai-sdk/openai no longer); a small margin. */
const MAX_PACKAGE_MODULES = 160;

describe("import('arbor-agent')", () => {
  let loaded: Record<string, number> = {};
  beforeAll(() => {
    loaded = packagesLoadedBy("src/index.ts");
  }, 120_000);

  it("loads none of the subsystems that load on first use", () => {
    expect(LAZY.filter((name) => name in loaded)).toEqual([]);
    expect(Object.keys(loaded).filter((name) => name.startsWith("@opentelemetry/"))).toEqual([]);
  });

  it("loads only the allowed packages, and at most a pinned number of their modules", () => {
    expect(Object.keys(loaded).filter((name) => !ALLOWED.includes(name))).toEqual([]);
    expect(loaded.ai).toBeGreaterThan(0);
    const total = Object.values(loaded).reduce((sum, count) => sum + count, 0);
    expect(total).toBeLessThanOrEqual(MAX_PACKAGE_MODULES);
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HOOK_NAMES } from "../../src/harness/hook-types.ts";
import * as harnessApi from "../../src/api/harness.ts";
import * as sessionApi from "../../src/api/session.ts";
import * as toolsApi from "../../src/api/tools.ts";
import * as compactionApi from "../../src/api/compaction.ts";
import * as root from "../../src/index.ts";

const publicApi = { ...root, ...harnessApi, ...sessionApi, ...toolsApi, ...compactionApi };

describe("docs", () => {
  it("docs/hooks.md has one section with a TypeScript example per hook", () => {
    const text = readFileSync("docs/hooks.md", "utf8");
    for (const name of HOOK_NAMES) {
      const section = text.split(`\n## ${name}\n`)[1]?.split("\n## ")[0];
      expect(section, name).toBeDefined();
      expect(section, name).toMatch(new RegExp("```ts\\n[\\s\\S]*" + name + "[\\s\\S]*```"));
    }
  });

  it("docs/api.md mentions every harness export", () => {
    const text = readFileSync("docs/api.md", "utf8");
    for (const name of ["createHarness", "validateHarnessOptions", "createHookRunner", "defineJsonSchemaTool", "buildSystemPrompt", "createModelRegistry", "moveTo"]) {
      expect(publicApi, name).toHaveProperty(name);
      expect(text, name).toContain(name);
    }
  });
});

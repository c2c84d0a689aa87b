import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HOOK_NAMES } from "../../src/harness/hook-types.ts";
import * as arbor from "../../src/index.ts";

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
      expect(arbor, name).toHaveProperty(name);
      expect(text, name).toContain(name);
    }
  });
});

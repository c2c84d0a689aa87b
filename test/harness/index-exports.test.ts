import { describe, expect, it } from "vitest";
import * as arbor from "../../src/index.ts";

describe("src/index.ts", () => {
  it("exports the harness and every landed module's entry points", () => {
    const names = [
      "createHarness", "validateHarnessOptions", "createHookRunner", "defineJsonSchemaTool", "buildSystemPrompt", "createModelRegistry",
      "createAgent", "createMemoryEventLog", "createSqliteEventLog", "openEventLog", "createSessionRepository",
      "createAiSdkModelClient", "createOpenAIModel", "createAnthropicModel", "createGoogleModel", "createModel", "defaultOpenAIWire", "createCodingTools", "createReadTool", "createExecutionEnv",
      "loadSkills", "formatSkillsForSystemPrompt", "formatSkillInvocation", "loadPromptTemplates", "expandSlashCommand", "substituteArgs", "parseCommandArgs",
      "compact", "moveTo", "createCompactionHooks", "importPiSession", "exportPiSession", "defineTool", "HarnessConfigError", "sessionStreamId",
    ];
    for (const name of names) expect(arbor, name).toHaveProperty(name);
    expect(arbor.HOOK_NAMES).toHaveLength(18);
  });
});

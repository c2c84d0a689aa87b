import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { type ArborError, HarnessConfigError } from "../../src/core/errors.ts";
import { validateHarnessOptions, type AgentHarnessOptions } from "../../src/harness/options.ts";

const model = new MockLanguageModelV4({ modelId: "mock-1" });
const tool = { name: "echo", description: "Echo", parameters: { type: "object" }, execute: async () => ({ content: [] }) };

function fieldOf(options: unknown): string {
  try {
    validateHarnessOptions(options as AgentHarnessOptions);
  } catch (error) {
    expect(HarnessConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain((error as ArborError).details.field as string);
    return (error as ArborError).details.field as string;
  }
  throw new Error("expected HarnessConfigError");
}

describe("validateHarnessOptions", () => {
  it("accepts a minimal and a full set of options", () => {
    expect(() => validateHarnessOptions({ models: { main: model } })).not.toThrow();
    expect(() =>
      validateHarnessOptions({
        models: { main: { model, contextWindow: 128_000, maxTokens: 4096, cost: { input: 0.15, output: 0.6 } }, other: model },
        model: "other",
        tools: [tool],
        activeToolNames: ["echo"],
        systemPrompt: ({ cwd }) => `cwd ${cwd}`,
        streamOptions: { transport: "sse", timeoutMs: 1000, maxRetries: 0, maxRetryDelayMs: 500, headers: { "x-k": "v" }, metadata: { user: "u" }, cacheRetention: "long" },
        retry: { baseDelayMs: 10 },
        thinkingLevel: "high",
        steeringMode: "all",
        followUpMode: "one-at-a-time",
        toolContext: (call: { toolName: string }) => call.toolName,
        hooks: { toolCall: () => undefined, context: [() => undefined] },
        resources: { skills: [], promptTemplates: [{ name: "review", content: "Review $1", description: "Review", filePath: "/p/review.md", frontmatter: {} }] },
      }),
    ).not.toThrow();
  });

  it.each<[string, unknown, string]>([
    ["no models", { models: {} }, "models"],
    ["a string model id", { models: { main: "openai:gpt-4o" } }, "models.main"],
    ["a bad context window", { models: { main: { model, contextWindow: -5 } } }, "models.main.contextWindow"],
    ["an unknown model name", { models: { main: model }, model: "fast" }, "model"],
    ["a negative timeout", { models: { main: model }, streamOptions: { timeoutMs: -1 } }, "streamOptions.timeoutMs"],
    ["a numeric header", { models: { main: model }, streamOptions: { headers: { "x-n": 1 } } }, "streamOptions.headers.x-n"],
    ["an unknown transport", { models: { main: model }, streamOptions: { transport: "carrier-pigeon" } }, "streamOptions.transport"],
    ["an unknown stream option", { models: { main: model }, streamOptions: { timeout: 5 } }, "streamOptions.timeout"],
    ["an unknown thinking level", { models: { main: model }, thinkingLevel: "max" }, "thinkingLevel"],
    ["a bad queue mode", { models: { main: model }, steeringMode: "every" }, "steeringMode"],
    ["a tool without execute", { models: { main: model }, tools: [tool, { ...tool, name: "x", execute: 3 }] }, "tools[1].execute"],
    ["a bad tool name", { models: { main: model }, tools: [{ ...tool, name: "has space" }] }, "tools[0].name"],
    ["a duplicate tool name", { models: { main: model }, tools: [tool, tool] }, "tools[1].name"],
    ["an active tool that does not exist", { models: { main: model }, tools: [tool], activeToolNames: ["echo", "bash"] }, "activeToolNames[1]"],
    ["a system prompt number", { models: { main: model }, systemPrompt: 42 }, "systemPrompt"],
    ["an unknown hook", { models: { main: model }, hooks: { beforeEverything: () => {} } }, "hooks.beforeEverything"],
    ["a non-function hook", { models: { main: model }, hooks: { toolCall: "block" } }, "hooks.toolCall"],
    ["a typo'd top-level option", { models: { main: model }, tool: [] }, "tool"],
    ["session and repository together", { models: { main: model }, session: { appendEntries() {}, appendEvents() {}, moveLeaf() {} }, repository: { create() {}, open() {}, fork() {} } }, "repository"],
    ["a session that is not one", { models: { main: model }, session: {} }, "session"],
    ["a negative compaction reserve", { models: { main: model }, compaction: { reserveTokens: -1 } }, "compaction.reserveTokens"],
    ["an unknown compaction setting", { models: { main: model }, compaction: { keepRecent: 5 } }, "compaction.keepRecent"],
    ["a template without content", { models: { main: model }, resources: { promptTemplates: [{ name: "x" }] } }, "resources.promptTemplates[0].content"],
  ])("names the field for %s", (_label, options, field) => {
    expect(fieldOf(options)).toBe(field);
  });

  it("lists every failing field in details.issues", () => {
    try {
      validateHarnessOptions({ models: { main: model }, thinkingLevel: "max", steeringMode: "x" } as never);
      expect.unreachable();
    } catch (error) {
      const issues = (error as ArborError).details.issues as { field: string }[];
      expect(issues.map((issue) => issue.field).sort()).toEqual(["steeringMode", "thinkingLevel"]);
      expect((error as ArborError).code).toBe("HARNESS_CONFIG_INVALID");
    }
  });

  it("rejects a non-object", () => {
    expect(fieldOf(undefined)).toBe("(options)");
  });
});

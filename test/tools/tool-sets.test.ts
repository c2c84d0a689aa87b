import { createBashToolDefinition, createEditToolDefinition, createFindToolDefinition, createGrepToolDefinition, createLsToolDefinition, createReadToolDefinition, createWriteToolDefinition } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { createCodingTools, createExecutionEnv, createReadOnlyTools } from "../../src/adapters/tools/index.ts";
import { outcome, runTool, tempDir, textOf } from "./tool-harness.ts";

/** The JSON Schema properties pi sends for a tool (typebox), reduced to name → type/description. */
function shape(schema: Record<string, any>) {
  const properties = schema.properties as Record<string, any>;
  return {
    required: [...(schema.required ?? [])].sort(),
    properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, { type: value.type, description: value.description }])),
  };
}

describe("tool sets", () => {
  it("are pi's sets, in pi's order, with pi's parameter names, types and descriptions", () => {
    const root = tempDir();
    const env = createExecutionEnv({ root });
    expect(createCodingTools(env).map((tool) => tool.name)).toEqual(["read", "bash", "edit", "write"]);
    expect(createReadOnlyTools(env).map((tool) => tool.name)).toEqual(["read", "grep", "find", "ls"]);
    const pi = [
      createReadToolDefinition(root),
      createBashToolDefinition(root),
      createEditToolDefinition(root),
      createWriteToolDefinition(root),
      createGrepToolDefinition(root),
      createFindToolDefinition(root),
      createLsToolDefinition(root),
    ];
    const ours = [...createCodingTools(env), ...createReadOnlyTools(env).slice(1)];
    for (const tool of ours) {
      const theirs = pi.find((definition) => definition.name === tool.name)!;
      expect(shape(tool.parameters), tool.name).toEqual(shape(theirs.parameters as Record<string, any>));
      expect(tool.description, tool.name).toBe(theirs.description);
    }
    const edits = createCodingTools(env)[2].parameters as Record<string, any>;
    expect(edits.additionalProperties).toBe(false);
    expect(edits.properties.edits.items.additionalProperties).toBe(false);
  });

  it("work together on one env", async () => {
    const root = tempDir();
    const [read, bash, edit, write] = createCodingTools(createExecutionEnv({ root }));
    await runTool(write, { path: "app/main.sh", content: "echo one\n" });
    await runTool(edit, { path: "app/main.sh", edits: [{ oldText: "one", newText: "two" }] });
    expect(textOf(await runTool(read, { path: "app/main.sh" }))).toBe("echo two\n");
    expect(textOf(await runTool(bash, { command: "sh app/main.sh" }))).toBe("two\n");
  });

  it("every tool honours an aborted signal", async () => {
    const root = tempDir();
    const env = createExecutionEnv({ root });
    const controller = new AbortController();
    controller.abort();
    const args: Record<string, unknown> = {
      read: { path: "a" },
      bash: { command: "true" },
      edit: { path: "a", edits: [{ oldText: "a", newText: "b" }] },
      write: { path: "a", content: "x" },
      grep: { pattern: "a" },
      find: { pattern: "*" },
      ls: {},
    };
    for (const tool of [...createCodingTools(env), ...createReadOnlyTools(env)]) {
      const result = await outcome(tool, args[tool.name], { signal: controller.signal });
      expect(result.error, tool.name).toBe(true);
      expect(result.text, tool.name).toBe(tool.name === "bash" ? "Command aborted" : "Operation aborted");
    }
  });
});

/**
 * Type tests: what users write with tools type-checks, and what they get wrong does not. Checked by
 * `npm run typecheck` (tsc over test/; a `@ts-expect-error` that stops erroring fails it) and run
 * by vitest for the runtime half.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { type AgentTool, defineTool, type ToolResult } from "../../src/index.ts";

const read = defineTool({
  name: "read",
  description: "Reads a file",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => ({ content: [{ type: "text", text: path }] }),
});
const deploy = defineTool({
  name: "deploy",
  description: "Deploys a service",
  parameters: z.object({ service: z.string(), replicas: z.number().int() }),
  needsApproval: (args) => args.replicas > 1,
  execute: async ({ service, replicas }) => ({ content: [{ type: "text", text: `${service} x${replicas}` }], details: { replicas } }),
});

describe("typed tools", () => {
  it("fit in an AgentTool[] next to each other, needsApproval included", () => {
    const tools: AgentTool[] = [read, deploy];
    expect(tools.map((tool) => tool.name)).toEqual(["read", "deploy"]);
    expectTypeOf(read).toExtend<AgentTool>();
    expectTypeOf(deploy).toExtend<AgentTool>();
  });

  it("keep their own argument and details types", async () => {
    expectTypeOf(deploy.execute).parameter(0).toEqualTypeOf<{ service: string; replicas: number }>();
    expectTypeOf(deploy.execute).returns.resolves.toEqualTypeOf<ToolResult<unknown>>();
    const validated = deploy.validate({ service: "web", replicas: 2 });
    expect(validated).toEqual({ ok: true, value: { service: "web", replicas: 2 } });
    if (validated.ok) expectTypeOf(validated.value).toEqualTypeOf<{ service: string; replicas: number }>();
  });

  it("refuse arguments and results of the wrong shape", () => {
    defineTool({
      name: "bad",
      description: "reads a field the schema does not have",
      parameters: z.object({ path: z.string() }),
      // @ts-expect-error `nope` is not a field of the parameters schema.
      execute: async ({ nope }) => ({ content: [{ type: "text", text: String(nope) }] }),
    });
    defineTool({
      name: "bad-approval",
      description: "compares a string with a number",
      parameters: z.object({ path: z.string() }),
      // @ts-expect-error `path` is a string: needsApproval sees the schema's types.
      needsApproval: (args) => args.path > 1,
      execute: async ({ path }) => ({ content: [{ type: "text", text: path }] }),
    });
    defineTool({
      name: "bad-result",
      description: "returns a bare string",
      parameters: z.object({ path: z.string() }),
      // @ts-expect-error a tool returns `{ content: [...] }`, not a string.
      execute: async ({ path }) => path,
    });
    // @ts-expect-error an AgentTool[] holds tools, not their names.
    const names: AgentTool[] = ["read"];
    expect(names).toHaveLength(1);
  });
});

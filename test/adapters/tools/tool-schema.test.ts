import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolDefinitionError } from "../../../src/core/errors.ts";
import { defineTool } from "../../../src/core/tools.ts";
import { defineJsonSchemaTool } from "../../../src/adapters/tools/tool-schema.ts";

const execute = async () => ({ content: [] });

describe("defineJsonSchemaTool", () => {
  const tool = defineJsonSchemaTool({
    name: "search",
    description: "Search",
    parameters: {
      type: "object",
      properties: { query: { type: "string", minLength: 1 }, limit: { type: "integer", default: 10 }, filter: { type: "object", properties: { lang: { enum: ["ts", "js"] } } } },
      required: ["query"],
      additionalProperties: false,
    },
    execute,
  });

  it("accepts valid arguments and applies defaults to a copy", () => {
    const args = { query: "x" };
    expect(tool.validate(args)).toEqual({ ok: true, value: { query: "x", limit: 10 } });
    expect(args).toEqual({ query: "x" });
  });

  it("names every failing field, nested ones with dots", () => {
    const result = tool.validate({ limit: "5", filter: { lang: "rust" }, extra: 1 });
    expect(result.ok).toBe(false);
    const message = (result as { message: string }).message;
    expect(message).toMatch(/^Invalid arguments for tool "search": /);
    expect(message).toContain("query: must have required property 'query'");
    expect(message).toContain("limit: must be integer");
    expect(message).toContain("filter.lang: must be equal to one of the allowed values");
    expect(message).toContain("extra: must NOT have additional properties");
  });

  it("does not coerce types", () => {
    expect(tool.validate({ query: 5 }).ok).toBe(false);
  });

  it("honours a draft 2020-12 $schema (zod's output) and the default draft-07", () => {
    const zodSchema = defineTool({ name: "z", description: "", parameters: z.object({ n: z.number().max(3) }), execute }).parameters;
    const from2020 = defineJsonSchemaTool({ name: "n", description: "", parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", ...zodSchema }, execute });
    expect(from2020.validate({ n: 4 }).ok).toBe(false);
    expect(from2020.validate({ n: 2 }).ok).toBe(true);
    const draft7 = defineJsonSchemaTool({ name: "t", description: "", parameters: { type: "object", properties: { items: { type: "array", items: [{ type: "string" }] } } }, execute });
    expect(draft7.validate({ items: [1] }).ok).toBe(false);
  });

  it("throws ToolDefinitionError naming the tool for an uncompilable schema", () => {
    expect(() => defineJsonSchemaTool({ name: "broken", description: "", parameters: { type: "no-such-type" }, execute })).toThrow(ToolDefinitionError);
    expect(() => defineJsonSchemaTool({ name: "broken", description: "", parameters: { type: "no-such-type" }, execute })).toThrow(/Tool "broken"/);
  });

  it("returns a zod tool unchanged", () => {
    const zodTool = defineTool({ name: "z", description: "", parameters: z.object({}), execute });
    expect(defineJsonSchemaTool(zodTool)).toBe(zodTool);
  });
});

/**
 * JSON-Schema tools: tools whose `parameters` are a JSON Schema object (as MCP and
 * OpenAI function tools declare them), validated with ajv — the sibling of `defineTool`
 * (zod) in `src/core/tools.ts`.
 *
 * Contract (ours):
 * - the schema is compiled once, when the tool is defined; an uncompilable schema throws
 *   `ToolDefinitionError` naming the tool;
 * - `$schema` selects the dialect: draft 2020-12 and 2019-09 when declared, else draft-07
 *   (ajv's default, what MCP servers send);
 * - validation works on a clone: schema `default`s are applied to the clone, never to the
 *   caller's object; types are not coerced;
 * - a failure message names every failing field (`path: message; …`), like `defineTool`.
 *
 * @example
 * ```ts
 * const add = defineJsonSchemaTool({
 *   name: "add", description: "Add two numbers",
 *   parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
 *   async execute(args) { return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] }; },
 * });
 * ```
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { ToolDefinitionError } from "../../core/errors.ts";
import type { AgentTool } from "../../core/tools.ts";

/** A tool declared with a JSON Schema and no `validate`: the harness compiles one. */
export type JsonSchemaTool<Args = Record<string, unknown>, Details = unknown, Context = unknown> = Omit<
  AgentTool<Args, Details, Context>,
  "validate"
> & { validate?: undefined };

const engines = new Map<string, Ajv>();
function engineFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  const key = dialect.includes("2020-12") ? "2020" : dialect.includes("2019-09") ? "2019" : "07";
  let engine = engines.get(key);
  if (!engine) {
    const options = { allErrors: true, strict: false, useDefaults: true, coerceTypes: false, validateFormats: false } as const;
    engine = key === "2020" ? new Ajv2020(options) : key === "2019" ? new Ajv2019(options) : new Ajv(options);
    engines.set(key, engine);
  }
  return engine;
}

/**
 * Formats ajv errors as one line naming each failing field (dotted paths; `(root)` for the object).
 *
 * @example
 * ```ts
 * formatAjvErrors(check.errors); // "query: must have required property 'query'; limit: must be integer"
 * ```
 */
export function formatAjvErrors(errors: readonly ErrorObject[] | null | undefined): string {
  if (!errors?.length) return "(root): invalid";
  return errors
    .map((error) => {
      const segments = error.instancePath.split("/").slice(1).map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
      const missing = (error.params as { missingProperty?: string }).missingProperty;
      const extra = (error.params as { additionalProperty?: string }).additionalProperty;
      if (missing !== undefined) segments.push(missing);
      if (extra !== undefined) segments.push(extra);
      return `${segments.length ? segments.join(".") : "(root)"}: ${error.message ?? "invalid"}`;
    })
    .join("; ");
}

/**
 * Turns a JSON-Schema tool into an {@link AgentTool} whose `validate` runs ajv.
 * A tool that already has `validate` (e.g. from `defineTool`) is returned unchanged.
 *
 * @throws ToolDefinitionError (code `TOOL_INVALID`) when `parameters` is not a compilable JSON Schema.
 * @example
 * ```ts
 * const tool = defineJsonSchemaTool({ name: "echo", description: "Echo", parameters: { type: "object", properties: { text: { type: "string" } } }, execute: async (a) => ({ content: [{ type: "text", text: String(a.text) }] }) });
 * tool.validate({ text: 1 }); // { ok: false, message: 'Invalid arguments for tool "echo": text: must be string' }
 * ```
 */
export function defineJsonSchemaTool<Args = Record<string, unknown>, Details = unknown, Context = unknown>(
  tool: JsonSchemaTool<Args, Details, Context> | AgentTool<Args, Details, Context>,
): AgentTool<Args, Details, Context> {
  if (typeof tool.validate === "function") return tool as AgentTool<Args, Details, Context>;
  const schema = tool.parameters;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new ToolDefinitionError(`Tool "${tool.name}": parameters must be a JSON Schema object.`, { details: { tool: tool.name } });
  }
  let check: ValidateFunction;
  try {
    const { $schema: _dialect, ...body } = schema;
    check = engineFor(schema).compile(body);
  } catch (error) {
    throw new ToolDefinitionError(`Tool "${tool.name}": parameters is not a valid JSON Schema: ${(error as Error).message}`, {
      cause: error,
      details: { tool: tool.name },
    });
  }
  return {
    ...tool,
    validate(args) {
      const value = args === undefined ? {} : structuredClone(args);
      return check(value)
        ? { ok: true, value: value as Args }
        : { ok: false, message: `Invalid arguments for tool "${tool.name}": ${formatAjvErrors(check.errors)}` };
    },
  };
}

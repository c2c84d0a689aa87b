/**
 * JSON-Schema tools (MCP and OpenAI function tools), validated with ajv: the schema compiles once at definition (`ToolDefinitionError` if it
 * cannot), `$schema` picks the dialect (default draft-07), validation works on a clone (defaults applied to it, no coercion), and a failure names
 * every failing field.
 * ajv is required when the first JSON-Schema tool is defined, not when this module loads.
 */
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import type { Ajv2019 } from "ajv/dist/2019.js";
import type { Ajv2020 } from "ajv/dist/2020.js";
import { ToolDefinitionError } from "../../core/errors.ts";
import { lazyRequire } from "../../core/lazy-require.ts";
import type { AgentTool } from "../../core/tools.ts";

/** A tool declared with a JSON Schema and no `validate`: the harness compiles one. */
export type JsonSchemaTool<Args = Record<string, unknown>, Details = unknown, Context = unknown> = Omit<
  AgentTool<Args, Details, Context>,
  "validate"
> & { validate?: undefined };

const ajv07 = lazyRequire<{ Ajv: typeof Ajv }>("ajv");
const ajv2019 = lazyRequire<{ Ajv2019: typeof Ajv2019 }>("ajv/dist/2019.js");
const ajv2020 = lazyRequire<{ Ajv2020: typeof Ajv2020 }>("ajv/dist/2020.js");

const engines = new Map<string, Ajv>();
function engineFor(schema: Record<string, unknown>): Ajv {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  const key = dialect.includes("2020-12") ? "2020" : dialect.includes("2019-09") ? "2019" : "07";
  let engine = engines.get(key);
  if (!engine) {
    const options = { allErrors: true, strict: false, useDefaults: true, coerceTypes: false, validateFormats: false } as const;
    engine = key === "2020" ? new (ajv2020().Ajv2020)(options) : key === "2019" ? new (ajv2019().Ajv2019)(options) : new (ajv07().Ajv)(options);
    engines.set(key, engine);
  }
  return engine;
}

/** Formats ajv errors as one line naming each failing field (dotted paths; `(root)` for the object). */
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
 * @throws ToolDefinitionError (code `TOOL_INVALID`) when `parameters` is not a compilable JSON Schema.
 * @example
 * const tool = defineJsonSchemaTool({ name: "echo", description: "Echo", parameters: { type: "object", properties: { text: { type: "string" } } }, execute: async (a) => ({ content: [{ type: "text", text: String(a.text) }] }) });
 * tool.validate({ text: 1 }); // { ok: false, message: 'Invalid arguments for tool "echo": text: must be string' }
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

/**
 * The tool contract Arbor's tool-execution actor runs (pi's AgentTool): arguments are validated once, before `execute`; a tool fails by throwing
 * (the loop makes an error result of it); `execute` honours `context.signal`; `executionMode: "sequential"` makes the batch sequential; `timeoutMs`
 * bounds one execution; `needsApproval` gates a call behind a human decision (a throw fails closed; `docs/approval.md`).
 */
import type { ToolProcess } from "./process-group.ts";
import { z } from "zod";
import type { ImageContent, TextContent } from "./messages.ts";

/** What a tool returns. `details` is for UIs and logs, never sent to the model. */
export interface ToolResult<Details = unknown> {
  content: (TextContent | ImageContent)[];
  details?: Details;
  /** When every result of a batch says terminate, the loop ends after the batch. */
  terminate?: boolean;
  /** Lets a tool return an error result without throwing. */
  isError?: boolean;
}

/** The tool-execution modes, one list (the options' zod enums read it; each has a row in `BATCH_MODES`). */
export const TOOL_EXECUTION_MODES = ["parallel", "sequential"] as const;

/**
 * How a batch of tool calls runs: all at once, or one after the other (a tool's `executionMode`, the harness's `toolExecution`).
 * @example
 * const mode: ToolExecutionMode = "sequential";
 */
export type ToolExecutionMode = (typeof TOOL_EXECUTION_MODES)[number];

/**
 * A tool's replay policy when a run is continued by another process (`docs/durability.md`).
 * @example
 * const policy: ToolReplayPolicy = "safe";
 */
export type ToolReplayPolicy = "safe" | "unsafe";

/** What `execute` receives besides its arguments. */
export interface ToolExecuteContext<Context = unknown> {
  toolCallId: string;
  /**
   * The call's idempotency key (its call id): the same on every execution of the call, also when a `replay: "safe"` tool is run again by the process
   * that continues an interrupted run (`docs/durability.md`). A tool with effects outside the process dedupes them by this key.
   */
  idempotencyKey: string;
  /** Aborts on run abort or tool timeout. */
  signal: AbortSignal;
  /** Streams a partial result (logged as `tool.updated`). */
  onUpdate: (partial: ToolResult) => void;
  /**
   * Reports a process group the tool started (pgid and the leader's start time), logged in a `tool.updated` event so that crash recovery can end the
   * group if it outlives the agent (`process-group.ts`). Optional: contexts made outside the agent may not offer it.
   */
  onProcess?: (process: ToolProcess) => void;
  /** The host's registered secrets, for a tool that writes output the redacting log does not see (bash spill files). Absent when none. */
  secrets?: readonly string[];
  /** The harness's `toolContext` value for this call. */
  context: Context;
}

/**
 * What a `needsApproval` function receives besides the arguments.
 * @example
 * const needsApproval = (args: { path: string }, call: ApprovalCheckContext) => call.toolName === "write" && !args.path.startsWith("tmp/");
 */
export interface ApprovalCheckContext<Context = unknown> {
  toolCallId: string;
  toolName: string;
  /** The harness's `toolContext` value for this call. */
  context: Context;
}

/** The outcome of argument validation. */
export type ToolValidation<Args> = { ok: true; value: Args } | { ok: false; message: string };

/** A tool the agent can call. `Name` is the name's literal type when `defineTool` knows it (`createHarness` checks `activeToolNames` against it). */
export interface AgentTool<Args = Record<string, unknown>, Details = unknown, Context = unknown, Name extends string = string> {
  name: Name;
  /** Human-readable label for UIs. */
  label?: string;
  description: string;
  /** JSON Schema (an object schema) of the arguments, as sent to the model. */
  parameters: Record<string, unknown>;
  /** Compatibility shim run before validation (e.g. parse a JSON string field). Source: pi. */
  prepareArguments?: (raw: unknown) => unknown;
  /** Validates prepared arguments; the message names the failing field. */
  validate: (args: unknown) => ToolValidation<Args>;
  executionMode?: ToolExecutionMode;
  /**
   * What a process that continues an interrupted run does with a call of this tool that was in flight when its owner stopped (ours,
   * `docs/durability.md`): `"safe"` runs it again with the same `context.idempotencyKey`; `"unsafe"` (the default) gives it the `interrupted` result
   * and the model goes on.
   */
  replay?: ToolReplayPolicy;
  /** Timeout of one execution in ms (ours). Undefined = none. */
  timeoutMs?: number;
  /** Whether a call needs human approval before it runs: a boolean, or a function of the validated arguments (a throw counts as `true`). */
  needsApproval?: boolean | Bivariant<(args: Args, call: ApprovalCheckContext<Context>) => boolean | Promise<boolean>>;
  execute: Bivariant<(args: Args, context: ToolExecuteContext<Context>) => Promise<ToolResult<Details>>>;
}

/**
 * `F` with bivariant parameters (a method's, as TypeScript checks them), so a tool typed for its own arguments is assignable to `AgentTool` and fits
 * in an `AgentTool[]`. Sound at run time: the loop calls `execute` and `needsApproval` only with what the tool's own `validate` returned.
 */
type Bivariant<F extends (...args: never[]) => unknown> = { bivarianceHack(...args: Parameters<F>): ReturnType<F> }["bivarianceHack"];

/** Options of {@link defineTool}: like {@link AgentTool} but `parameters` is a zod object schema. */
export interface DefineToolOptions<Schema extends z.ZodType, Details, Context, Name extends string = string>
  extends Omit<AgentTool<z.infer<Schema>, Details, Context, Name>, "parameters" | "validate"> {
  parameters: Schema;
}

/**
 * Formats a zod error as one line naming each failing field.
 * @example
 * const result = schema.safeParse(input);
 * if (!result.success) throw new Error(formatZodError(result.error)); // "path: expected string, received undefined"
 */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
}

/**
 * Defines a tool with a zod schema. The JSON Schema sent to the model is `z.toJSONSchema(parameters)`; validation is `parameters.safeParse`.
 * @example
 * const weather = defineTool({
 *   name: "weather",
 *   description: "Current weather for a city",
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }) => ({ content: [{ type: "text", text: `Sunny in ${city}` }] }),
 * });
 */
export function defineTool<Schema extends z.ZodType, Details = unknown, Context = unknown, const Name extends string = string>(
  options: DefineToolOptions<Schema, Details, Context, Name>,
): AgentTool<z.infer<Schema>, Details, Context, Name> {
  const { parameters, ...rest } = options;
  const jsonSchema = z.toJSONSchema(parameters, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete jsonSchema.$schema;
  return {
    ...rest,
    parameters: jsonSchema,
    validate(args) {
      const result = parameters.safeParse(args);
      return result.success
        ? { ok: true, value: result.data }
        : { ok: false, message: `Invalid arguments for tool "${options.name}": ${formatZodError(result.error)}` };
    },
  };
}

/**
 * The zod schema of `AgentHarnessOptions` (`options.ts`) and {@link validateHarnessOptions}, which throws `HarnessConfigError` naming the first
 * failing field by its dotted path (`details.issues` lists all), synchronously, before anything is opened. Cross-field rules: at most one of
 * `session`/`repository`/`eventLog`, `model` names a registry entry, tool names unique. Live objects are checked by shape, never cloned.
 */
import { z } from "zod";
import { HarnessConfigError } from "../core/errors.ts";
import type { ThinkingLevel } from "../core/messages.ts";
import { THINKING_LEVELS } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { TOOL_EXECUTION_MODES } from "../core/tools.ts";
import { resolveCompactionSettings } from "../compaction/settings.ts";
import { HOOK_NAMES } from "./hook-types.ts";
import { TELEMETRY_FLAVORS } from "../telemetry/options.ts";
import { checkHarnessBudget } from "./budget-options.ts";
import { DELTA_RETENTIONS } from "../core/vocabulary.ts";
import type { AgentHarnessOptions, AiSdkLanguageModel } from "./options.ts";

const fn = (what: string) => z.custom<(...args: any[]) => unknown>((value) => typeof value === "function", { message: `expected ${what}` });
const objectWith = (what: string, ...methods: string[]) =>
  z.custom<object>(
    (value) => typeof value === "object" && value !== null && methods.every((name) => typeof (value as Record<string, unknown>)[name] === "function"),
    { message: `expected ${what} (an object with ${methods.join(", ")})` },
  );

const inspectObserver = z.custom<unknown>(
  (value) => typeof value === "function" || (typeof value === "object" && value !== null && (typeof (value as { next?: unknown }).next === "function" || typeof (value as { forSession?: unknown }).forSession === "function")),
  { message: "expected an XState inspection observer (a function or an object with next) or a createMachineStates() recorder" },
);

const isModelClient = (value: unknown) => typeof value === "object" && value !== null && typeof (value as ModelClient).stream === "function";
const isLanguageModel = (value: unknown) =>
  typeof value === "object" && value !== null && typeof (value as { doStream?: unknown }).doStream === "function" && typeof (value as { modelId?: unknown }).modelId === "string";

const modelObject = z.custom<AiSdkLanguageModel | ModelClient>((value) => isModelClient(value) || isLanguageModel(value), {
  message: "expected an AI SDK LanguageModel (with doStream) or an Arbor ModelClient (with stream); string model ids are not resolved",
});
const positiveInt = z.number().int().positive();
const price = z.number().nonnegative();
const modelInfoShape = {
  contextWindow: positiveInt.optional(),
  maxTokens: positiveInt.optional(),
  cost: z.object({ input: price, output: price, cacheRead: price.optional(), cacheWrite: price.optional() }).optional(),
  reasoning: z.boolean().optional(),
};
const modelValue = z.union([modelObject, z.object({ model: modelObject, ...modelInfoShape }).strict()], {
  error: "expected a LanguageModel, a ModelClient, or { model, contextWindow?, maxTokens?, cost?, reasoning? }",
});

const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "expected 1-64 characters of a-z, A-Z, 0-9, _ or -");
const tool = z.looseObject({
  name: toolName,
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  execute: fn("a function execute(args, context)"),
  validate: fn("a function validate(args)").optional(),
  timeoutMs: positiveInt.optional(),
  executionMode: z.enum(TOOL_EXECUTION_MODES).optional(),
});

const queueMode = z.enum(["one-at-a-time", "all"]);
const stringRecord = z.record(z.string(), z.string());

/**
 * The zod schema of {@link AgentHarnessOptions} (shapes and field rules; cross-field rules live in
 * {@link validateHarnessOptions}, which callers should use: it throws `HarnessConfigError`).
 * @example
 * agentHarnessOptionsSchema.safeParse({ models: {} }).success; // false
 */
export const agentHarnessOptionsSchema = z
  .object({
    session: objectWith("a SessionHandle", "appendEntries", "appendEvents", "moveLeaf").optional(),
    repository: objectWith("a SessionRepository", "create", "open", "fork").optional(),
    eventLog: objectWith("an EventLog", "append", "readStream", "subscribe").optional(),
    eventLogPath: z.string().min(1).optional(),
    eventLogRetention: z.enum(DELTA_RETENTIONS).optional(),
    eventLogEncryption: z.object({ key: z.unknown().optional(), provider: z.unknown().optional(), previousKeys: z.array(z.unknown()).optional(), keyFile: z.string().optional(), keySchema: z.string().optional() }).optional(),
    sessionId: z.string().min(1).optional(),
    tenant: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    models: z.record(z.string().min(1), modelValue).refine((models) => Object.keys(models).length > 0, "expected at least one model"),
    model: z.string().min(1).optional(),
    tools: z.array(tool).optional(),
    resources: z
      .object({
        skills: z.array(z.looseObject({ name: z.string(), description: z.string(), filePath: z.string(), body: z.string() })).optional(),
        promptTemplates: z.array(z.looseObject({ name: z.string().min(1), content: z.string() })).optional(),
        skillPaths: z.array(z.string().min(1)).optional(),
        promptTemplatePaths: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .optional(),
    systemPrompt: z.union([z.string(), fn("a function ({ tools, skills, cwd, date }) => string")], { error: "expected a string or a function" }).optional(),
    contextFiles: z.array(z.object({ path: z.string().min(1), content: z.string() })).optional(),
    streamOptions: z
      .object({
        transport: z.enum(["sse", "websocket", "websocket-cached", "auto"]).optional(),
        timeoutMs: positiveInt.optional(),
        maxRetries: z.number().int().nonnegative().optional(),
        maxRetryDelayMs: z.number().int().nonnegative().optional(),
        headers: stringRecord.optional(),
        metadata: stringRecord.optional(),
        cacheRetention: z.enum(["none", "short", "long"]).optional(),
      })
      .strict()
      .optional(),
    retry: z
      .object({ maxRetries: z.number().int().nonnegative().optional(), baseDelayMs: z.number().nonnegative().optional(), maxDelayMs: z.number().nonnegative().optional() })
      .strict()
      .optional(),
    thinkingLevel: z.enum(THINKING_LEVELS as [ThinkingLevel, ...ThinkingLevel[]]).optional(),
    activeToolNames: z.array(z.string()).optional(),
    steeringMode: queueMode.optional(),
    followUpMode: queueMode.optional(),
    toolExecution: z.enum(TOOL_EXECUTION_MODES).optional(),
    maxToolCallsPerResponse: z.number().int().min(1).optional(),
    requireApproval: z.union([z.literal("all"), z.array(z.string().min(1))]).optional(),
    durability: z.enum(["continue", "interrupt"]).optional(),
    leaseTtlMs: z.number().int().min(100).optional(),
    budget: z.unknown().optional(),
    inspect: z.union([inspectObserver, z.array(inspectObserver)]).optional(),
    mcpServers: z.array(z.looseObject({ name: z.string() })).optional(),
    mcpAuth: z.looseObject({}).optional(),
    elicitation: z.object({ ask: fn("a function (request, signal) => answer").optional(), onRequested: fn("a function (request) => void").optional() }).strict().optional(),
    secrets: z.array(z.string()).optional(),
    toolContext: z.unknown().optional(),
    workspace: z
      .object({
        root: z.string().min(1),
        maxFileBytes: z.number().int().positive().optional(),
        maxCheckpointBytes: z.number().int().positive().optional(),
        scanAfter: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .optional(),
    memory: z
      .object({ principal: z.string().min(1).optional(), maxValueBytes: z.number().int().positive().optional(), tools: z.boolean().optional() })
      .strict()
      .optional(),
    hooks: z
      .object(Object.fromEntries(HOOK_NAMES.map((name) => [name, z.union([fn("a handler function"), z.array(fn("a handler function"))]).optional()])))
      .strict()
      .optional(),
    enableSkillCommands: z.boolean().optional(),
    compaction: z.looseObject({}).optional(),
    telemetry: z
      .union([
        z.literal(false),
        z
          .object({
            tracerProvider: objectWith("an OpenTelemetry TracerProvider", "getTracer").optional(),
            meterProvider: objectWith("an OpenTelemetry MeterProvider", "getMeter").optional(),
            flavor: z.enum(TELEMETRY_FLAVORS).optional(),
            captureContent: z.boolean().optional(),
            agentName: z.string().min(1).optional(),
          })
          .strict(),
      ], { error: "expected false or { tracerProvider?, meterProvider?, flavor?, captureContent?, agentName? }" })
      .optional(),
  })
  .strict();

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => (typeof key === "number" ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), "") || "(options)";
}

function configError(field: string, message: string, issues: { field: string; message: string }[] = [{ field, message }]): never {
  throw new HarnessConfigError(`Invalid harness option "${field}": ${message}`, { details: { field, issues } });
}

/**
 * Validates options: shapes with {@link agentHarnessOptionsSchema}, then the cross-field rules. Returns the options unchanged (typed).
 * @throws HarnessConfigError (code `HARNESS_CONFIG_INVALID`) naming the first failing field;
 *   `details.field` is its path and `details.issues` every failing field.
 * @example
 * try { validateHarnessOptions({ models: {} }); }
 * catch (error) { if (HarnessConfigError.isInstance(error)) console.error(error.details.field); } // "models"
 */
export function validateHarnessOptions(options: AgentHarnessOptions): AgentHarnessOptions {
  if (typeof options !== "object" || options === null) configError("(options)", "expected an options object");
  const result = agentHarnessOptionsSchema.safeParse(options);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => {
      // An unrecognized key is reported on its parent: name the key itself.
      const keys = issue.code === "unrecognized_keys" ? issue.keys : [];
      return { field: fieldPath(keys.length ? [...issue.path, keys[0]] : issue.path), message: issue.code === "unrecognized_keys" ? "unknown option" : issue.message };
    });
    configError(issues[0].field, issues[0].message, issues);
  }
  if (options.compaction !== undefined) {
    try {
      resolveCompactionSettings(options.compaction);
    } catch (error) {
      const issue = ((error as { details?: { issues?: { path: PropertyKey[]; message: string; code?: string; keys?: string[] }[] } }).details?.issues ?? [])[0];
      const path = issue ? (issue.code === "unrecognized_keys" && issue.keys?.length ? [...issue.path, issue.keys[0]] : issue.path) : [];
      configError(fieldPath(["compaction", ...path]), issue?.code === "unrecognized_keys" ? "unknown option" : (issue?.message ?? (error as Error).message));
    }
  }
  const given = (["session", "repository", "eventLog"] as const).filter((key) => options[key] !== undefined);
  if (given.length > 1) configError(given[1], `give only one of session, repository or eventLog (got ${given.join(" and ")})`);
  if (options.session && options.sessionId) configError("sessionId", "sessionId opens a session from a repository or log; it cannot be combined with session");
  if (options.eventLogPath && given.length > 0) configError("eventLogPath", `eventLogPath is only used when no ${given[0]} is given`);
  if (options.tenant !== undefined && (options.session || options.repository)) configError("tenant", "tenant scopes the repository the harness builds; give it to createSessionRepository({ tenant }) when you pass session or repository");
  if (options.budget !== undefined) {
    try {
      checkHarnessBudget(options.budget, "budget");
    } catch (error) {
      configError("budget", (error as Error).message);
    }
    if (options.session) configError("budget", "budgets need the log their ledger lives in: give eventLog, eventLogPath or repository instead of a bare session");
  }
  const names = Object.keys(options.models);
  if (options.model !== undefined && !names.includes(options.model)) configError("model", `"${options.model}" is not in models (${names.join(", ")})`);
  const toolNames = (options.tools ?? []).map((t) => t.name);
  toolNames.forEach((name, index) => {
    if (toolNames.indexOf(name) !== index) configError(`tools[${index}].name`, `duplicate tool name "${name}"`);
  });
  options.activeToolNames?.forEach((name, index) => {
    if (!toolNames.includes(name)) configError(`activeToolNames[${index}]`, `"${name}" is not a given tool (${toolNames.join(", ") || "no tools"})`);
  });
  return options;
}

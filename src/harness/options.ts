/**
 * `AgentHarnessOptions`: what `createHarness` accepts, its zod schema, and {@link validateHarnessOptions}, which throws `HarnessConfigError` naming
 * the first failing field by its dotted path (`details.issues` lists all), synchronously, before anything is opened. Cross-field rules: at most one
 * of `session`/`repository`/`eventLog`, `model` names a registry entry, tool names unique. Live objects are checked by shape, never cloned.
 */
import type { EncryptionOptions } from "../store/crypto/log-cipher.ts";
import type { WorkspaceOptions } from "./workspace/recorder.ts";
import type { MemoryOptions } from "./memory/session-memory.ts";
import type { LanguageModelV3, LanguageModelV4 } from "@ai-sdk/provider";
import { z } from "zod";
import { HarnessConfigError } from "../core/errors.ts";
import type { ImageContent, ThinkingLevel } from "../core/messages.ts";
import { THINKING_LEVELS } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { TOOL_EXECUTION_MODES, type AgentTool, type ToolExecutionMode } from "../core/tools.ts";
import type { Durability, QueueMode, RetrySettings } from "../machines/agent-types.ts";
import type { Skill } from "../adapters/skills/types.ts";
import type { PromptTemplate } from "../adapters/prompt-templates/types.ts";
import { resolveCompactionSettings, type CompactionSettingsInput } from "../compaction/settings.ts";
import type { EventLog } from "../store/event-log.ts";
import type { McpServerConfig } from "../adapters/mcp/config.ts";
import type { McpAuthOptions } from "../adapters/mcp/oauth.ts";
import type { ElicitationWaiterOptions } from "./elicitations.ts";
import type { SessionHandle, SessionRepository } from "../store/session-types.ts";
import type { HarnessHooks } from "./hook-types.ts";
import { HOOK_NAMES } from "./hook-types.ts";
import type { JsonSchemaTool } from "../adapters/tools/tool-schema.ts";
import { TELEMETRY_FLAVORS, type TelemetryOptions } from "../telemetry/options.ts";
import type { ContextFile } from "./context-files.ts";
import { checkHarnessBudget, type HarnessBudget } from "./budget-options.ts";
import { DELTA_RETENTIONS, type DeltaRetentionMode } from "../core/vocabulary.ts";

/**
 * An AI SDK language model object (not a string id: Arbor never resolves models over the network): spec v4 (provider packages of AI SDK 7), or spec
 * v3 (of AI SDK 6), adapted by `ai`'s own `wrapLanguageModel`.
 */
export type AiSdkLanguageModel = LanguageModelV4 | LanguageModelV3;

/** Model facts the registry keeps next to the model. Tokens and $ per million tokens. */
export interface ModelInfo {
  /** Context window in tokens. */
  contextWindow?: number;
  /** Max output tokens per call. */
  maxTokens?: number;
  /** Prices in US$ per million tokens. */
  cost?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** True if the model accepts a reasoning effort (thinking level). */
  reasoning?: boolean;
}

/** A registry entry: a model with its facts. */
export interface ModelEntry extends ModelInfo {
  model: AiSdkLanguageModel | ModelClient;
}

/** Skills and prompt templates, loaded or to be loaded. */
export interface HarnessResources {
  skills?: Skill[];
  promptTemplates?: PromptTemplate[];
  /** Directories to load skills from with `loadSkills` (added after `skills`). */
  skillPaths?: string[];
  /** Files or directories to load templates from with `loadPromptTemplates` (added after `promptTemplates`). */
  promptTemplatePaths?: string[];
}

/** What a system-prompt function receives. */
export interface SystemPromptContext {
  /** The active tools, in registration order. */
  tools: { name: string; description: string }[];
  /** Skills the model may invoke (without `disable-model-invocation`). */
  skills: Skill[];
  cwd: string;
  /** The current date, `YYYY-MM-DD` (local time). */
  date: string;
  /** The harness's `contextFiles` (AGENTS.md / CLAUDE.md), to place as the function likes. */
  contextFiles: ContextFile[];
}

/** Stream options, pi-ai's names. Times in ms. */
export interface HarnessStreamOptions {
  /** Preferred transport; adapters that cannot honour it ignore it (pi). The AI SDK adapter uses SSE. */
  transport?: "sse" | "websocket" | "websocket-cached" | "auto";
  /** Per-request timeout in ms. */
  timeoutMs?: number;
  /** Retries of a failed model call (default 3); feeds `retry.maxRetries` unless `retry` sets it. */
  maxRetries?: number;
  /** Largest backoff / server-requested delay honoured, ms; feeds `retry.maxDelayMs` unless `retry` sets it. */
  maxRetryDelayMs?: number;
  /** Extra HTTP headers on every request. Never logged. */
  headers?: Record<string, string>;
  /** Request metadata for providers that take it (OpenAI `metadata`: string values). Never logged. */
  metadata?: Record<string, string>;
  /** Prompt-cache retention: `none`, `short` (default), `long` (OpenAI `promptCacheRetention: "24h"`). */
  cacheRetention?: "none" | "short" | "long";
}

/** The tool-context option: a value, or a function called once per tool call. */
export type ToolContextOption = unknown | ((call: { toolCallId: string; toolName: string }) => unknown);

/** Options of `createHarness`. `ModelName` is inferred from `models`' keys, so an unknown `model` is a compile error (with a literal registry). */
export interface AgentHarnessOptions<ModelName extends string = string, ToolName extends string = string> {
  /** An open session to drive. Excludes `repository` and `eventLog`. */
  session?: SessionHandle;
  /** A repository to create (or, with `sessionId`, open) the session in. */
  repository?: SessionRepository;
  /** An event log to build the repository over. */
  eventLog?: EventLog;
  /** Path of the SQLite event log when none of session/repository/eventLog is given (default `<cwd>/.arbor/arbor.db`). */
  eventLogPath?: string;
  /**
   * Retention of the streamed deltas in the log the harness opens itself (at `eventLogPath`; not a given `eventLog`): `"delete"` (default) deletes a
   * message's `message.delta` events once it ended and was kept (its entry has the text; `delta-retention.ts`), `"drop"` empties their text, `"keep"`
   * keeps them (a finished run's token stream stays replayable).
   */
  eventLogRetention?: DeltaRetentionMode;
  /**
   * Encryption at rest of the log the harness opens itself (at `eventLogPath`; not a given `eventLog`, which you open with its own `encryption`):
   * each session sealed with its own data key, destroyed when the session is deleted (`docs/privacy.md`). No snapshot file is kept then.
   */
  eventLogEncryption?: EncryptionOptions;
  /**
   * With `eventLog` or `eventLogPath`: the tenant the harness's repository is scoped to (sessions are created in it; `sessionId` / `openSession` of
   * another tenant's session throw SessionNotFoundError, as for a missing one). Default: every tenant, new sessions `default`.
   */
  tenant?: string;
  /** Open this session instead of creating one (with repository, eventLog or eventLogPath). */
  sessionId?: string;
  /** Working directory of the session and the system prompt (default `process.cwd()`). */
  cwd?: string;
  /** Model registry: name → model (AI SDK LanguageModel or Arbor ModelClient) or {model, facts}. */
  models: Record<ModelName, AiSdkLanguageModel | ModelClient | ModelEntry>;
  /** The registry name to start with (default: the first); one of the keys of `models`. */
  model?: NoInfer<ModelName>;
  tools?: ((AgentTool<any, any, any> | JsonSchemaTool<any>) & { name: ToolName })[];
  resources?: HarnessResources;
  systemPrompt?: string | ((context: SystemPromptContext) => string);
  /**
   * Project context files appended to a string or default system prompt under `# Project Context` (pi). Load them with `loadContextFiles({ cwd,
   * agentDir: defaultAgentDir() })`; default none (the library reads no AGENTS.md by itself; the CLI does).
   */
  contextFiles?: ContextFile[];
  streamOptions?: HarnessStreamOptions;
  retry?: Partial<RetrySettings>;
  thinkingLevel?: ThinkingLevel;
  /** Tool names sent to the model (default: all); each must be the name of one of `tools` (checked at compile time when their names are literal types). */
  activeToolNames?: NoInfer<ToolName>[];
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /** Default "parallel" (pi). */
  toolExecution?: ToolExecutionMode;
  /** At most this many tool calls of one model response run (default 128); the rest get an error result. */
  maxToolCallsPerResponse?: number;
  /**
   * Tool names whose every call needs a human decision before it runs, or `"all"` (besides each tool's `needsApproval`). A gated call stops the run
   * `suspended`; `session.approve()` / `deny()`, then `continue()`. See `docs/approval.md`.
   */
  requireApproval?: readonly string[] | "all";
  /**
   * What happens to a run whose process stopped mid-run (`docs/durability.md`): `"interrupt"` (the default; the CLI's `arbor run`) closes it as
   * `interrupted` when its session is opened again; `"continue"` continues it from the log when the session is opened here (the continuation starts
   * by itself; `harness.resume(id)` resolves with its outcome). Tools decide what happens to their in-flight calls with `replay: "safe" | "unsafe"`.
   */
  durability?: Durability;
  /**
   * The TTL of a run's lease on its session, in ms (default 10 000): once its process stopped renewing it for this long, another process can take
   * the run over (`docs/durability.md`, "Leases and fencing").
   */
  leaseTtlMs?: number;
  /**
   * Spend limits (`docs/budgets.md`): `run` limits each run, `session` each session (all its runs), `tenant` each tenant (all its sessions; a
   * function of the tenant name for per-tenant limits). Each holds `maxCostUsd`, `maxTokens`, `maxToolCalls`, `maxTurns`, `maxDurationMs`. Checked
   * before every model and tool call against the ledger in the log; a run that would go over ends `budget_exceeded`. Needs a log (not a bare
   * `session` handle).
   */
  budget?: HarnessBudget;
  /**
   * XState inspection observer passed to every agent (e.g. `createArborInspector().inspect`), or a `createMachineStates()` recorder: each session's
   * agent then gets that recorder's observer for its session (the live machine states of the service's inspector, `docs/http.md`). Or an array of
   * those, to run several at once (e.g. `[createArborInspector().inspect, machines]`): each inspection event goes to each, in array order (see
   * `src/harness/inspection.ts`); an empty array means none. An element that is not a function, an object with `next` or a recorder is refused with
   * `HarnessConfigError`.
   */
  inspect?: unknown;
  /** MCP servers whose tools join `tools` (named `server__tool`), connected by `createHarness` and closed by `close()`. */
  mcpServers?: McpServerConfig[];
  /** OAuth of the `mcpServers` with `oauth`: the token `store` (default in memory) and `tenant` (default the harness's, else `"default"`). */
  mcpAuth?: McpAuthOptions;
  /**
   * The servers' requests for user input (`elicitation/create`) are durable waits in the log (`docs/mcp.md`, "Elicitation"), answered from any
   * process. `ask` also answers them here (a terminal prompt; `undefined` leaves it to others); `onRequested` is told of each request.
   */
  elicitation?: Pick<ElicitationWaiterOptions, "ask" | "onRequested">;
  /** Values never written to the log (API keys, tokens): appends to a log the harness opens or is given go through `createRedactingEventLog`. */
  secrets?: string[];
  toolContext?: ToolContextOption;
  /**
   * Workspace checkpoints (off by default): the files under `root` are recorded in the log's database after each tool call that changes them, and
   * follow the session tree (`session.workspace.restore(entryId)`). See `docs/workspace.md`.
   */
  workspace?: WorkspaceOptions;
  /** Session memory (`docs/memory.md`): `principal` enables the principal scope, `tools: true` gives the model the memory tools. Off by default. */
  memory?: MemoryOptions;
  hooks?: HarnessHooks;
  /** Enables `/skill:name args` in `prompt()` (default true, pi). */
  enableSkillCommands?: boolean;
  /** Compaction settings (automatic compaction between turns and on overflow; pi's defaults). */
  compaction?: CompactionSettingsInput;
  /**
   * OpenTelemetry spans and metrics through `@opentelemetry/api` (on by default, global providers; `false` turns them off). See `docs/telemetry.md`.
   */
  telemetry?: TelemetryOptions | false;
}

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

/** Images accepted by `prompt(text, images)`. */
export type PromptImages = ImageContent[];

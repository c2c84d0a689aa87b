/**
 * `AgentHarnessOptions`: what `createHarness` accepts, and the types its fields use. Its zod schema and {@link validateHarnessOptions} (which
 * throws `HarnessConfigError` naming the first failing field, before anything is opened) are in `options-schema.ts`, re-exported here.
 */
import type { EncryptionOptions } from "../store/crypto/log-cipher.ts";
import type { WorkspaceOptions } from "./workspace/recorder.ts";
import type { MemoryOptions } from "./memory/session-memory.ts";
import type { LanguageModelV3, LanguageModelV4 } from "@ai-sdk/provider";
import type { ImageContent, ThinkingLevel } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { AgentTool, ToolExecutionMode } from "../core/tools.ts";
import type { Durability, QueueMode, RetrySettings } from "../machines/agent-types.ts";
import type { Skill } from "../adapters/skills/types.ts";
import type { PromptTemplate } from "../adapters/prompt-templates/types.ts";
import type { CompactionSettingsInput } from "../compaction/settings.ts";
import type { EventLog } from "../store/event-log.ts";
import type { McpServerConfig } from "../adapters/mcp/config.ts";
import type { McpAuthOptions } from "../adapters/mcp/oauth.ts";
import type { ElicitationWaiterOptions } from "./elicitations.ts";
import type { SessionHandle, SessionRepository } from "../store/session-types.ts";
import type { HarnessHooks } from "./hook-types.ts";
import type { JsonSchemaTool } from "../adapters/tools/tool-schema.ts";
import type { TelemetryOptions } from "../telemetry/options.ts";
import type { ContextFile } from "./context-files.ts";
import type { HarnessBudget } from "./budget-options.ts";
import type { DeltaRetentionMode } from "../core/vocabulary.ts";

export { agentHarnessOptionsSchema, validateHarnessOptions } from "./options-schema.ts";

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

/** Images accepted by `prompt(text, images)`. */
export type PromptImages = ImageContent[];

/**
 * The harness hook points (pi's extension events, `docs/pi-parity.md`): event shapes, what each handler may return, and the {@link HarnessHooks}
 * map. Handlers run in registration order and may be async; patches chain field by field; for cancellable hooks the first `cancel: true` wins, for
 * `toolCall` the first `block: true`; a throwing handler is recorded and skipped (in `toolCall` it blocks); observe-only hooks ignore results.
 */
import type { CompactionEntry, BranchSummaryEntry, SessionEntry } from "../core/entries.ts";
import type { AgentMessage, ImageContent, ThinkingLevel } from "../core/messages.ts";
import type { ModelRequest } from "../core/model-stream.ts";
import type { ToolResult } from "../core/tools.ts";
import type { CompactionReason, TreePreparation } from "../compaction/hook-types.ts";
import type { CompactionPreparation } from "../compaction/prepare.ts";

export type { CompactionReason, TreePreparation };

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/** A hook handler: receives the event, returns a result (or nothing). */
export type HookHandler<Event, Result = void> = (event: Event) => Awaitable<Result | undefined | void>;

/** `beforeAgentStart`: after slash-command expansion, before the run starts. Source: pi `before_agent_start`. */
export interface BeforeAgentStartEvent {
  /** The prompt text after `/template` and `/skill:` expansion ("" when the prompt was messages). */
  prompt: string;
  images: ImageContent[];
  /** The messages the run starts with (the prompt), as patched by earlier handlers. */
  messages: AgentMessage[];
  /** The system prompt of this run, as patched by earlier handlers. */
  systemPrompt: string;
}
/** `beforeAgentStart` result: messages to inject after the prompt; a system prompt for this run only. */
export interface BeforeAgentStartResult {
  /** Appended after the prompt messages; they go out in the first turn and are persisted. */
  messages?: AgentMessage[];
  /** Replaces the system prompt for this run only (the next prompt starts from the base again). */
  systemPrompt?: string;
}

/** `context`: before every model call. Handlers get a structured clone. Source: pi `context`. */
export interface ContextEvent {
  messages: AgentMessage[];
}
/** `context` result: the messages for this one model call (never persisted). */
export interface ContextResult {
  messages?: AgentMessage[];
}

/** The stream options a `beforeProviderRequest` handler may patch. */
export interface ProviderRequestOptions {
  /** Model name in the harness registry. */
  model: string;
  thinkingLevel?: ThinkingLevel;
  maxTokens?: number;
  temperature?: number;
  /** HTTP headers sent with the request (never logged). */
  headers?: Record<string, string>;
  timeoutMs?: number;
  providerOptions?: ModelRequest["providerOptions"];
}
/** `beforeProviderRequest`: before each model call. Source: ours (pi patches via `onPayload` only). */
export interface BeforeProviderRequestEvent {
  options: ProviderRequestOptions;
  systemPrompt?: string;
  /** Names of the tools sent with this call. */
  toolNames: string[];
}
/** `beforeProviderRequest` result: fields to replace in the stream options (`model` cannot change here). */
export type BeforeProviderRequestResult = Partial<Omit<ProviderRequestOptions, "model">>;

/** `beforeProviderPayload`: the JSON body about to be sent. Source: pi `before_provider_request`. */
export interface BeforeProviderPayloadEvent {
  payload: unknown;
}
/** `beforeProviderPayload` result: the payload to send instead. */
export interface BeforeProviderPayloadResult {
  payload?: unknown;
}

/** `afterProviderResponse`: HTTP status and headers, before the body is read. Source: pi. */
export interface AfterProviderResponseEvent {
  status: number;
  headers: Record<string, string>;
}

/** `toolCall`: after argument validation, before execute. Source: pi `tool_call`. */
export interface ToolCallEvent {
  toolCallId: string;
  toolName: string;
  /** The validated arguments. Handlers may mutate them in place; they are not re-validated (pi). */
  input: Record<string, unknown>;
}
/** `toolCall` result: block (first block wins), or replace the input. */
export interface ToolCallResult {
  block?: boolean;
  /** The error text of a blocked call (default "Tool execution was blocked"). */
  reason?: string;
  input?: Record<string, unknown>;
}

/** `toolResult`: after execute. Source: pi `tool_result`. */
export interface ToolResultEvent {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  content: ToolResult["content"];
  details: unknown;
  isError: boolean;
  terminate: boolean;
}
/** `toolResult` result: each present field replaces the result's field. */
export interface ToolResultPatch {
  content?: ToolResult["content"];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
}

/** `sessionBeforeCompact`: before a compaction is made. Source: pi `session_before_compact`. */
export interface SessionBeforeCompactEvent {
  /** The compaction engine's preparation (cut point, messages to summarize, tokensBefore). */
  preparation: CompactionPreparation;
  /** The entries of the current branch, root first. */
  branchEntries: SessionEntry[];
  customInstructions?: string;
  reason: CompactionReason;
  signal: AbortSignal;
}
/** `sessionBeforeCompact` result: cancel, or supply the compaction (`fromHook: true`; missing fields default to the preparation's). */
export interface SessionBeforeCompactResult {
  cancel?: boolean;
  compaction?: { summary: string; firstKeptEntryId?: string; tokensBefore?: number; details?: unknown };
}

/** `sessionCompact`: after the compaction entry is stored. Source: pi `session_compact`. */
export interface SessionCompactEvent {
  compactionEntry: CompactionEntry;
  fromHook: boolean;
  reason: CompactionReason;
}

/** `sessionBeforeTree`: before `moveTo` changes anything. Source: pi `session_before_tree`. */
export interface SessionBeforeTreeEvent {
  preparation: TreePreparation;
  signal: AbortSignal;
}
/** `sessionBeforeTree` result: cancel; supply the summary; override instructions or label. */
export interface SessionBeforeTreeResult {
  cancel?: boolean;
  /** Used only when the caller asked to summarize (pi). */
  summary?: { summary: string; details?: unknown };
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}

/** `sessionTree`: after `moveTo`. Source: pi `session_tree`. */
export interface SessionTreeEvent {
  newLeafId: string | null;
  oldLeafId: string | null;
  summaryEntry?: BranchSummaryEntry;
  /** True when the summary came from a `sessionBeforeTree` handler. */
  fromHook?: boolean;
}

/** `retryScheduled`: from a logged `retry.scheduled` event. Delay in ms. */
export interface RetryScheduledEvent {
  attempt: number;
  delayMs: number;
  error: string;
  status?: number;
}
/** `retryAttemptStart`: from a logged `retry.started` event. */
export interface RetryAttemptStartEvent {
  attempt: number;
}
/** `retryFinished`: from a logged `retry.ended` event. */
export interface RetryFinishedEvent {
  attempt: number;
  success: boolean;
  error?: string;
}

/** `modelUpdate`: after `setModel` logged its `model_change` entry. */
export interface ModelUpdateEvent {
  model: string;
  provider: string;
  modelId: string;
  previous: { model: string; provider: string; modelId: string };
}
/** `thinkingLevelUpdate`: after `setThinkingLevel` logged its entry. */
export interface ThinkingLevelUpdateEvent {
  thinkingLevel: ThinkingLevel;
  previous: ThinkingLevel;
}
/** `toolsUpdate`: after `setActiveTools` logged its entry. */
export interface ToolsUpdateEvent {
  activeToolNames: string[];
  previous: string[];
}
/** `resourcesUpdate`: after `setResources` logged its custom entry. */
export interface ResourcesUpdateEvent {
  skills: string[];
  promptTemplates: string[];
}

/** Every hook with its event and result types. */
export interface HookSignatures {
  beforeAgentStart: [BeforeAgentStartEvent, BeforeAgentStartResult];
  context: [ContextEvent, ContextResult];
  beforeProviderRequest: [BeforeProviderRequestEvent, BeforeProviderRequestResult];
  beforeProviderPayload: [BeforeProviderPayloadEvent, BeforeProviderPayloadResult];
  afterProviderResponse: [AfterProviderResponseEvent, void];
  toolCall: [ToolCallEvent, ToolCallResult];
  toolResult: [ToolResultEvent, ToolResultPatch];
  sessionBeforeCompact: [SessionBeforeCompactEvent, SessionBeforeCompactResult];
  sessionCompact: [SessionCompactEvent, void];
  sessionBeforeTree: [SessionBeforeTreeEvent, SessionBeforeTreeResult];
  sessionTree: [SessionTreeEvent, void];
  retryScheduled: [RetryScheduledEvent, void];
  retryAttemptStart: [RetryAttemptStartEvent, void];
  retryFinished: [RetryFinishedEvent, void];
  modelUpdate: [ModelUpdateEvent, void];
  thinkingLevelUpdate: [ThinkingLevelUpdateEvent, void];
  toolsUpdate: [ToolsUpdateEvent, void];
  resourcesUpdate: [ResourcesUpdateEvent, void];
}

/** A hook's name. */
export type HookName = keyof HookSignatures;

/** The handler type of hook `Name`. */
export type HandlerOf<Name extends HookName> = HookHandler<HookSignatures[Name][0], HookSignatures[Name][1]>;

/** Handlers by hook: one function or a list (run in list order). */
export type HarnessHooks = { [Name in HookName]?: HandlerOf<Name> | HandlerOf<Name>[] };

/**
 * Every hook name, in the order of docs/hooks.md's table.
 * @example
 * for (const name of HOOK_NAMES) harness.on(name, () => void metrics.increment(`hook.${name}`));
 */
export const HOOK_NAMES: readonly HookName[] = [
  "beforeAgentStart",
  "context",
  "beforeProviderRequest",
  "beforeProviderPayload",
  "afterProviderResponse",
  "toolCall",
  "toolResult",
  "sessionBeforeCompact",
  "sessionCompact",
  "sessionBeforeTree",
  "sessionTree",
  "retryScheduled",
  "retryAttemptStart",
  "retryFinished",
  "modelUpdate",
  "thinkingLevelUpdate",
  "toolsUpdate",
  "resourcesUpdate",
];

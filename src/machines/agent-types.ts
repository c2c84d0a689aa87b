/**
 * The agent actor's API (implemented in `agent.ts`), shared by the harness, compaction and the CLI: one agent per session; `prompt()` while running
 * throws `SessionBusyError`; steering is polled before the first model call and after each turn, follow-ups only when the run would stop; errors
 * inside are data, and `prompt()` rejects only for API misuse.
 */
import type { Observable } from "rxjs";
import type { AgentMessage, AssistantMessage, ThinkingLevel } from "../core/messages.ts";
import type { ModelClient, ModelRequest } from "../core/model-stream.ts";
import type { AgentTool, ToolExecutionMode, ToolResult } from "../core/tools.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { AuditEvent } from "../store/events/audit.ts";
import type { ArborEvent } from "../store/events/catalogue.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { ApprovalDecisionResult, PendingApproval } from "./approval-fold.ts";
import type { BudgetGate, BudgetGateHooks } from "./run-budget.ts";
import type { BudgetExceeded } from "../core/budget.ts";
import type { SessionActor, SessionOperation } from "./session-slot.ts";
import type { RunStatus } from "../core/vocabulary.ts";

/** How many queued messages one poll drains. Source: pi. */
export type QueueMode = "one-at-a-time" | "all";

/** Retry settings (ms). Source: pi's auto-retry, with purista-style caps. */
export interface RetrySettings {
  /** Default 3. 0 disables retries. */
  maxRetries: number;
  /** First backoff delay, doubled each attempt (default 2000 ms). */
  baseDelayMs: number;
  /** Backoff cap and the largest server-requested delay honoured (default 60000 ms). */
  maxDelayMs: number;
}

/** `beforeToolCall` result: block with a reason, or replace the arguments. */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  args?: Record<string, unknown>;
}

/** `afterToolCall` patch: each present field replaces the result's field. Source: pi. */
export interface AfterToolCallResult {
  content?: ToolResult["content"];
  details?: unknown;
  isError?: boolean;
  terminate?: boolean;
}

/** Hooks the loop calls. All may be async; all receive the run's AbortSignal. */
export interface LoopHooks {
  /** Runs after validation. A throw blocks the call (its message is the result). */
  beforeToolCall?: (
    input: { toolCallId: string; toolName: string; args: Record<string, unknown>; assistantMessage: AssistantMessage },
    signal: AbortSignal,
  ) => Promise<BeforeToolCallResult | undefined> | BeforeToolCallResult | undefined;
  /** Patches the result field by field. A throw turns the result into an error. */
  afterToolCall?: (
    input: { toolCallId: string; toolName: string; args: Record<string, unknown>; result: ToolResult; isError: boolean },
    signal: AbortSignal,
  ) => Promise<AfterToolCallResult | undefined> | AfterToolCallResult | undefined;
  /** Replaces the messages for one model call (not persisted). */
  transformContext?: (messages: AgentMessage[], signal: AbortSignal) => Promise<AgentMessage[]> | AgentMessage[];
  /** Converts agent messages to model messages (default: keep user/assistant/toolResult, map custom and summaries to user). */
  convertToLlm?: (messages: AgentMessage[]) => AgentMessage[] | Promise<AgentMessage[]>;
  /** Last chance to change the request (stream options, payload hooks). */
  beforeModelCall?: (request: ModelRequest) => ModelRequest | Promise<ModelRequest>;
  /**
   * Called after every turn that will be followed by another model call, before that call (ours: compaction between turns). May append entries
   * through the session; returns the messages to continue with, or undefined to keep them.
   */
  betweenTurns?: (input: { messages: AgentMessage[]; lastAssistant: AssistantMessage; signal: AbortSignal }) =>
    Promise<AgentMessage[] | undefined>;
  /** Called when the provider reports a context overflow (ours). Return the compacted messages to retry once with, or undefined to fail the run. */
  onContextOverflow?: (input: { messages: AgentMessage[]; signal: AbortSignal }) => Promise<AgentMessage[] | undefined>;
}

/** Options of `createAgent`. */
export interface AgentOptions {
  session: SessionHandle;
  model: ModelClient;
  /** The model's name where the caller registered it (the harness's registry name); kept in the session actor's state and shown by `getState().modelName`. */
  modelName?: string;
  tools?: AgentTool<any, any, any>[];
  /** Tool names sent to the model; default all. */
  activeToolNames?: string[];
  systemPrompt?: string;
  thinkingLevel?: ThinkingLevel;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /** Default "parallel". Source: pi. */
  toolExecution?: ToolExecutionMode;
  /** At most this many tool calls of one assistant message run (default 128); the rest get an error result saying they were not run. */
  maxToolCallsPerResponse?: number;
  retry?: Partial<RetrySettings>;
  hooks?: LoopHooks;
  /** Secrets passed to each tool's execute (`ToolExecuteContext.secrets`), e.g. for bash spill files. */
  secrets?: readonly string[];
  /** Passed to each tool's execute (a value, or a function called per tool call). */
  toolContext?: unknown | ((call: { toolCallId: string; toolName: string }) => unknown);
  /** Stream options merged into every ModelRequest. */
  requestDefaults?: Partial<Omit<ModelRequest, "messages" | "tools" | "systemPrompt">>;
  /** XState inspection observer (see `createArborInspector`). */
  inspect?: unknown;
  /** Tool names whose every call needs a human decision before it runs, or `"all"`; besides each tool's `needsApproval` (`docs/approval.md`). */
  requireApproval?: readonly string[] | "all";
  /**
   * What happens to a run whose process stopped (`docs/durability.md`): `"interrupt"` (the default) closes it as `interrupted` when the session is
   * opened again; `"continue"` continues it from the log in this process (the agent starts the continuation once it is ready; its outcome is what
   * {@link Agent.resumeRun} resolves with).
   */
  durability?: Durability;
  /**
   * The TTL of a run's lease on its session, in ms (default 10 000; `docs/durability.md`, "Leases and fencing"): the run renews it every third of
   * that; another process can take the run over once it was not renewed for this long, and this process's writer then refuses to append and the run's
   * tools are aborted.
   */
  leaseTtlMs?: number;
  /**
   * Called once a takeover is committed (`run.resumed` logged, orphaned process groups ended), before the continued run does anything else; a
   * rejection fails the run. The harness puts the recorded workspace back here (`docs/workspace.md`, "Durable execution"). Ours.
   */
  beforeContinue?: () => Promise<void>;
  /**
   * Budgets (ours; `docs/budgets.md`): builds the gate that checks every model and tool call of this agent's runs against the ledger
   * (`createBudgetGate` in `run-budget.ts`), given the run the agent runs now and where to send a refusal. The harness provides it.
   */
  budget?: (agent: BudgetGateHooks) => BudgetGate;
}

/**
 * What a process does with an unfinished run whose owner stopped: close it (`"interrupt"`) or
 * continue it from the log (`"continue"`). See `docs/durability.md`.
 * @example
 * const durability: Durability = "continue";
 */
export type Durability = "continue" | "interrupt";

/**
 * Options of {@link Agent.resumeRun}.
 * @example
 * await agent.resumeRun({ reason: "deploy restarted the service" });
 */
export interface ResumeRunOptions {
  /** Why the run is taken over; logged in `run.resumed` (default: its owner stopped). */
  reason?: string;
}

/** How a run ended. */
export interface RunOutcome {
  runId: string;
  /** `suspended`: calls wait for approval (`pendingApprovals`); `budget_exceeded`: a budget refused a call (`budget` names the limit). */
  status: RunStatus;
  /** `suspended`: the gated calls that wait, in call order. */
  pendingApprovals?: string[];
  /** Messages appended by this run, in order. */
  messages: AgentMessage[];
  lastAssistant?: AssistantMessage;
  error?: string;
  /** Stable code when the run failed on an Arbor error, e.g. `EXPECTED_VERSION_CONFLICT` (ours). */
  code?: string;
  /** `budget_exceeded`: the limit, its scope, and the use the ledger held when the call was refused. */
  budget?: BudgetExceeded;
}

/** A snapshot of the agent for UIs (`agent.state$`). */
export interface AgentStateSnapshot {
  status: "idle" | "running";
  /** What holds the session's operation slot (`status` is "running" for `preparing` and `running`). */
  operation: SessionOperation;
  runId?: string;
  /** The assistant message being streamed, if any. */
  streamingMessage?: AssistantMessage;
  /** Tool calls executing now. */
  pendingToolCalls: string[];
  steeringQueue: AgentMessage[];
  followUpQueue: AgentMessage[];
  thinkingLevel: ThinkingLevel;
  model: { provider: string; modelId: string };
  /** The model's registered name (`AgentOptions.modelName`, `setModel(model, { name })`), when one was given. */
  modelName?: string;
  /** The tool names sent to the model; `null`: every tool. */
  activeToolNames: string[] | null;
  errorMessage?: string;
}

/**
 * What `PromptOptions.prepare` builds: the prompt messages, and a system prompt that replaces the agent's for this run only (the harness's
 * `beforeAgentStart` replacement). The run's system prompt is held in the agent machine's context (its run input), not logged: a continuation in
 * another process uses the agent's own.
 */
export interface PreparedPrompt {
  messages: AgentMessage[];
  systemPrompt?: string;
}

/** How a steering message is delivered (see `Agent.steer`). */
export type SteerDelivery = "active" | "passive" | "nextTurn";

/** Options of `Agent.prompt`. */
export interface PromptOptions {
  /**
   * Builds the prompt messages inside the operation slot (`preparing`), replacing `input`'s: the harness expands templates and runs
   * `beforeAgentStart` here, so the session is busy from the call on. `nextTurn` is the messages queued with `steer(…, { delivery: "nextTurn" })`
   * (taken by this prompt once it starts; without `prepare` they follow `input`). A throw rejects the prompt; an `abort()` meanwhile aborts the run
   * at its start.
   */
  prepare?: (nextTurn: AgentMessage[]) => Promise<AgentMessage[] | PreparedPrompt>;
}

/** The agent actor's API: the session actor of its session (one operation slot, `session-actor.ts`). */
export interface Agent extends SessionActor {
  readonly sessionId: string;
  /** Starts a run. Throws SessionBusyError synchronously unless the slot is idle (a run, a compaction or a navigation holds it). */
  prompt(input: string | AgentMessage | AgentMessage[], options?: PromptOptions): Promise<RunOutcome>;
  /**
   * Runs from the current context (after a crash, an error, or queued messages). In `awaiting-approval` it resumes: approved calls run once, denied
   * ones get an error result, then the loop goes on; rejects with `ApprovalPendingError` while a call still waits for a decision.
   */
  continue(): Promise<RunOutcome>;
  /**
   * Continues the session's unfinished run from the log (durable execution, `docs/durability.md`), in a process that may never have seen it: logs
   * `run.resumed` (previous owner, reason), closes a partial assistant message, runs in-flight calls of `replay: "safe"` tools again with the same
   * idempotency key, gives in-flight calls of other tools the `interrupted` result, then goes on with the loop under the same run id. Resolves with
   * the run's outcome like `prompt()`; a run whose calls wait for approval is closed `suspended` and resolves so. While a continuation of this run is
   * already going on here, resolves with its outcome. Rejects with `NothingToResumeError` (no unfinished run), `RunOwnedError` (a live process holds
   * the run), `SessionBusyError` (something else holds the slot).
   */
  resumeRun(options?: ResumeRunOptions): Promise<RunOutcome>;
  /**
   * Approves a call waiting for approval (ours): logs `approval.ended { status: "approved" }`; the call runs at the next `continue()`, in this or any
   * process. The same decision again resolves with `changed: false` and writes nothing. Rejects with `ApprovalNotFoundError` (no such gated call),
   * `ApprovalConflictError` (denied before, or already settled), `SessionBusyError` (a run is working).
   */
  approve(toolCallId: string, decision?: { reason?: string }): Promise<ApprovalDecisionResult>;
  /** Denies a waiting call: like {@link Agent.approve}; at `continue()` the model gets an error result saying the user declined, with `reason`. */
  deny(toolCallId: string, decision?: { reason?: string }): Promise<ApprovalDecisionResult>;
  /** The session's tool calls that wait for approval (undecided, or decided and not yet resumed), from the log. */
  pendingApprovals(): Promise<PendingApproval[]>;
  /**
   * Queues a steering message, injected before the next model call of this run (pi). With `delivery: "passive"` (ours, pi #5895) it is injected only
   * if the run goes on anyway (a model call follows for another reason); if the run was about to end, it does not wake it for an extra turn: the
   * message is held for the next prompt or continue. With `delivery: "nextTurn"` it is held (in the session actor's context, not logged) for the next
   * `prompt()`, whose messages it follows.
   */
  steer(message: string | AgentMessage, options?: { delivery?: SteerDelivery }): void;
  followUp(message: string | AgentMessage): void;
  clearSteeringQueue(): void;
  clearFollowUpQueue(): void;
  clearAllQueues(): void;
  hasQueuedMessages(): boolean;
  abort(reason?: string): void;
  /** Resolves when the agent is idle and its events are committed (crash recovery included). */
  waitForIdle(): Promise<void>;
  /** Resolves once the queues are restored from the log and crash recovery has finished; rejects with the recovery's error. */
  whenReady(): Promise<void>;
  getState(): AgentStateSnapshot;
  readonly state$: Observable<AgentStateSnapshot>;
  /** Logged events of this session: catch-up then live. */
  readonly events$: Observable<ArborEvent>;
  /** Events of the current and later runs only (live). */
  readonly runEvents$: Observable<ArborEvent>;
  /**
   * The session's audit stream (ours after purista's run events): `events$` without content (ids, names, counts, durations, statuses, usage, errors);
   * catch-up then live. See `toAuditEvents` and `docs/events.md`.
   */
  readonly auditEvents$: Observable<AuditEvent>;
  /** Changes the session actor's model (`name`: its registered name, see `AgentOptions.modelName`); logged as `model_change`. */
  setModel(model: ModelClient, options?: { name?: string }): Promise<void>;
  setThinkingLevel(level: ThinkingLevel): Promise<void>;
  setTools(tools: AgentTool<any, any, any>[], activeToolNames?: string[]): Promise<void>;
  /**
   * Appends a settings-like entry (label, session_info, custom) through the session writer: at once when idle (resolves once committed), else queued
   * and written when the run or operation ends (resolves at once, so a tool can call it without waiting for its own run).
   */
  appendEntry(entry: Record<string, unknown> & { type: string }): Promise<void>;
  /** Writes records (e.g. `hook.applied` / `hook.failed`) through the session writer; rejects with the writer's failure. */
  appendRecords(events: NewEvent[]): Promise<void>;
  /**
   * Reloads the session from the log after a refused write (another writer appended first): catches the view up, replaces the poisoned writer and
   * recovers a run left open. The next `prompt()` / `continue()` does this by itself. Throws SessionBusyError during a run, InvalidStateError when
   * the handle cannot refresh. Ours.
   */
  reload(): Promise<void>;
  /** Stops the actor system; pending writes are flushed first. */
  dispose(): Promise<void>;
}


/**
 * Types of the Session API (`harness-session.ts` implements them).
 *
 * Contract: see `harness-session.ts`; method semantics are pi's Agent / AgentSession (`docs/pi-parity.md`), ours where marked there.
 */
import type { Observable } from "rxjs";
import type { SessionWorkspace } from "./workspace/session-workspace.ts";
import type { SessionMemory } from "./memory/session-memory.ts";
import type { MoveToResult } from "../compaction/branch-summary.ts";
import type { PromptTemplate } from "../adapters/prompt-templates/types.ts";
import type { Skill } from "../adapters/skills/types.ts";
import type { CompactionEntry, CustomEntry } from "../core/entries.ts";
import type { AgentMessage, ImageContent, TextContent, ThinkingLevel } from "../core/messages.ts";
import type { Agent, AgentStateSnapshot, ResumeRunOptions, RunOutcome } from "../machines/agent-types.ts";
import type { ApprovalDecisionResult, PendingApproval } from "../machines/approval-fold.ts";
import type { AuditEvent } from "../store/events/audit.ts";
import type { ArborEvent, ArborEventHandler, ArborEventType } from "../store/events/catalogue.ts";
import type { SessionHandle, SessionStats } from "../store/session-types.ts";
import type { HandlerOf, HookName } from "./hook-types.ts";
import type { TraceContextInput } from "../telemetry/options.ts";
import type { HarnessBudget } from "./budget-options.ts";

export type { MoveToResult };

/** Options of `moveTo`. Source: pi's `navigateTree`. */
export interface MoveToOptions {
  /** Summarize the abandoned branch (a `sessionBeforeTree` hook may supply the summary; else the current model writes it). */
  summarize?: boolean;
  customInstructions?: string;
  /** Use `customInstructions` as the whole summary prompt. */
  replaceInstructions?: boolean;
  /** Label for the summary entry (or, without a summary, the target). */
  label?: string;
  signal?: AbortSignal;
}

/**
 * Options of one `prompt()` / `continue()` (ours): the W3C trace context of the caller. A valid `traceparent` makes the run's `invoke_agent` span its
 * child (every span of the run shares its trace id); an invalid one is reported (process warning `INVALID_TRACE_CONTEXT`) and the run starts a new
 * trace. Without one the run's parent is the caller's active OTel context.
 * @example
 * await session.prompt("hello", [], { traceparent: req.headers.traceparent, tracestate: req.headers.tracestate });
 */
export interface PromptOptions extends TraceContextInput {
  /**
   * Limits of the run this call starts (`docs/budgets.md`), on top of the harness's `budget`: `run` limits this run, `session` / `tenant` its session
   * and tenant while it runs; where both set a limit, the stricter holds. A run a limit stops ends `budget_exceeded`.
   */
  budget?: HarnessBudget;
}

/** Skills and templates in use. */
export interface LoadedResources {
  skills: Skill[];
  promptTemplates: PromptTemplate[];
}

/** Options of `appendCustomMessage`. Source: pi's `sendMessage`. */
export interface CustomMessageOptions {
  /** Shown in UIs (default true). The model always sees it. */
  display?: boolean;
  details?: unknown;
  /**
   * While running: `steer` (default) or `followUp` queue it; `nextTurn` holds it for the next prompt (also when idle); `passive` (ours, pi #5895)
   * injects it only if the run goes on anyway, else (and when idle) holds it for the next prompt, never waking a finished run.
   */
  deliverAs?: "steer" | "followUp" | "nextTurn" | "passive";
  /** When idle (and not nextTurn): start a run with the message instead of only appending it. */
  triggerTurn?: boolean;
}

/** The agent's snapshot plus the harness's view of the session. */
export interface HarnessState extends AgentStateSnapshot {
  sessionId: string;
  /** Registry name of the current model. */
  modelName: string;
  activeToolNames: string[];
  leafId: string | null;
  sessionName: string | undefined;
  /** The base system prompt (before any beforeAgentStart replacement). */
  systemPrompt: string;
}

/** One session driven by the harness. See the module contract. */
export interface HarnessSession {
  readonly id: string;
  readonly session: SessionHandle;
  readonly agent: Agent;
  /** The recorded workspace (harness option `workspace`; absent when off): files under its root follow the session tree (`docs/workspace.md`). */
  readonly workspace?: SessionWorkspace;
  /** The session's memory (the harness option `memory`; absent when it is off; `docs/memory.md`). */
  readonly memory?: SessionMemory;
  /** `options.traceparent` / `tracestate` continue the caller's trace (see {@link PromptOptions}). */
  prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[], options?: PromptOptions): Promise<RunOutcome>;
  /** Queues a steering message; `delivery: "passive"` never wakes a run that was about to end (see `Agent.steer`). */
  steer(message: string | AgentMessage, options?: { delivery?: "active" | "passive" }): void;
  followUp(message: string | AgentMessage): void;
  /** Continues from the context; after approval decisions it resumes the suspended run (see `Agent.continue`). */
  continue(options?: PromptOptions): Promise<RunOutcome>;
  /**
   * Continues this session's unfinished run from the log (`docs/durability.md`, `Agent.resumeRun`); rejects with `NothingToResumeError` or
   * `RunOwnedError`.
   */
  resumeRun(options?: ResumeRunOptions): Promise<RunOutcome>;
  /**
   * Approves a waiting tool call (`docs/approval.md`): logs `approval.ended { status: "approved" }`; the call runs once at the next `continue()`, in
   * any process. Idempotent; rejects as `Agent.approve` does.
   */
  approve(toolCallId: string, decision?: { reason?: string }): Promise<ApprovalDecisionResult>;
  /** Denies a waiting call; at `continue()` the model gets an error result saying the user declined, with `reason`. */
  deny(toolCallId: string, decision?: { reason?: string }): Promise<ApprovalDecisionResult>;
  /** The tool calls waiting for approval (undecided, or decided and not yet resumed), read from the log. */
  pendingApprovals(): Promise<PendingApproval[]>;
  abort(reason?: string): void;
  /** Resolves when idle and every event and hook record is committed. */
  waitForIdle(): Promise<void>;
  clearSteeringQueue(): void;
  clearFollowUpQueue(): void;
  clearAllQueues(): void;
  hasQueuedMessages(): boolean;
  getState(): HarnessState;
  /** Logged events of this session, typed by the catalogue (`ofType` narrows): catch-up then live. */
  readonly events$: Observable<ArborEvent>;
  /**
   * The audit stream (purista's run events): the session's events without content — ids, names, counts, durations (ms), statuses, token usage,
   * errors; no prompt, output, tool input or result. Catch-up then live. See `toAuditEvents` (`arbor-agent/log`) and `docs/events.md`.
   */
  readonly auditEvents$: Observable<AuditEvent>;
  /** Throws ModelConfigError for an unknown registry name. */
  setModel(name: string): Promise<void>;
  /** Throws InvalidArgumentError for an unknown level. */
  setThinkingLevel(level: ThinkingLevel): Promise<void>;
  /** Throws InvalidArgumentError naming an unknown tool. */
  setActiveTools(names: string[]): Promise<void>;
  setResources(resources: Partial<LoadedResources>): Promise<void>;
  /** Moves the leaf (pi's navigateTree). Throws SessionBusyError during a run, InvalidStateError while compacting, EntryNotFoundError. */
  moveTo(entryId: string, options?: MoveToOptions): Promise<MoveToResult>;
  /**
   * Compacts the current branch now (hooks `sessionBeforeCompact` / `sessionCompact`). Throws SessionBusyError during a run, CompactionError or
   * CompactionFailedError.
   */
  compact(customInstructions?: string): Promise<CompactionEntry>;
  /** A new session holding root→entryId (default: the leaf). Needs a repository (InvalidStateError otherwise). */
  fork(entryId?: string): Promise<HarnessSession>;
  /** Labels an entry; `undefined` clears. Throws EntryNotFoundError. */
  label(entryId: string, label: string | undefined): Promise<void>;
  setName(name: string): Promise<void>;
  appendCustomEntry(customType: string, data?: unknown): Promise<CustomEntry>;
  appendCustomMessage(customType: string, content: string | (TextContent | ImageContent)[], options?: CustomMessageOptions): Promise<void>;
  getStats(): SessionStats;
  /** Registers a hook handler for this session, after the option handlers; returns its remover. */
  on<Name extends HookName>(name: Name, handler: HandlerOf<Name>): () => void;
  /**
   * With a logged event type (dotted, e.g. `"tool.ended"`): calls `handler` with each event of that type committed from now on (live, in log order),
   * `data` typed; returns its remover. A throwing handler is reported as a process warning and keeps receiving later events.
   */
  on<Type extends ArborEventType>(type: Type, handler: ArborEventHandler<Type>): () => void;
  /** Reloads the session from the log after a lost write race (the next `prompt()` does it by itself). Throws SessionBusyError during a run. */
  reload(): Promise<void>;
  /** Stops the agent (aborting a run) after flushing every write. */
  dispose(): Promise<void>;
}

/**
 * The activity projection of one session stream: runs and their owner, the steering / follow-up / passive queues, gated calls and approvals, open
 * summary intents and typed-agent invocations. {@link foldActivity} is one pure reducer the session view applies to every stored event beside the
 * tree, so crash recovery, the run lease, queue restore, approvals and the CLI never re-fold the stream. The state is plain JSON (snapshots store
 * it); only the last run can be open, and its details ({@link OpenRun}) are folded from the events after its `run.started`.
 */
import { addEntryToAnswerTotals, emptyAnswerTotals, type AnswerTotals } from "../../core/agent-answer.ts";
import type { ToolProcess } from "../../core/process-group.ts";
import type { RunPolicy } from "../../core/run-policy.ts";
import type { AgentMessage, ToolCall } from "../../core/messages.ts";
import { isKnownEntry, type SessionEntry } from "../../core/entries.ts";
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType, type ArborEventData } from "../events/catalogue.ts";
import type { DeltaKind, RunStatus, ApprovalEndStatus, ApprovalSource } from "../../core/vocabulary.ts";

/** How a run stands: `open` until its `run.ended`, then that event's status. */
export type RunActivityStatus = "open" | RunStatus;

/** One run of the session, as the log tells it. Versions are stream versions. */
export interface RunRecord {
  runId: string;
  status: RunActivityStatus;
  startedVersion: number;
  endedVersion?: number;
  /** The run's own policy, from its `run.started` (absent when it recorded none): a `resume` run after its approvals keeps it. */
  policy?: RunPolicy;
}

/** A content block of a message being streamed, rebuilt from its `message.delta` events. */
export interface StreamedBlock {
  contentIndex: number;
  kind: DeltaKind;
  text: string;
  toolCallId?: string;
  toolName?: string;
}

/** A message started and not ended in the open run. */
export interface OpenMessage {
  messageId: string;
  role: string;
  /** Streamed blocks in arrival order of their first delta. */
  blocks: StreamedBlock[];
}

/** What the log says about the run that has no `run.ended` (yet). */
export interface OpenRun {
  runId: string;
  startedVersion: number;
  /** `metadata.owner` of `run.started`, or of the last `run.resumed`: the process running it (`run-lease.ts`). */
  owner: unknown;
  /** The index of the run's last `turn.started` (absent before its first, or in a state stored before it was folded). */
  lastTurnIndex?: number;
  /** The run's own policy, from its `run.started` (absent when it recorded none): a continuation applies it with its own (`docs/durability.md`). */
  policy?: RunPolicy;
  /** The model of `run.started`. */
  model: { provider?: string; modelId?: string; api?: string };
  /** The turn without `turn.ended`; `replied` once its complete assistant message is logged (not an errored or aborted one). */
  openTurn?: { turnId: string; index: number; replied?: boolean };
  openMessages: OpenMessage[];
  /** Tool calls of the run's assistant messages (not errored or aborted), in order. */
  calls: ToolCall[];
  /** Ids of the calls whose result entry is logged. */
  results: string[];
  /** Ids of calls this run gated for approval (`approval.requested`) without `tool.ended`. */
  gated: string[];
  /** A `resume` run's carried calls: the suspended run's approved calls without `tool.ended` when it started (their `tool.started` is that run's). */
  carried?: { id: string; name: string }[];
  /** The process group each tool recorded, by tool call id. */
  processes: Record<string, ToolProcess>;
}

/**
 * One gated call and its approval, as the log tells it (one type: the activity projection's record, which `approvalsOf` / `foldApprovals` and
 * `arbor-agent/agent` give out as is).
 */
export interface ApprovalRecord {
  toolCallId: string;
  toolName: string;
  /** The run that asked. */
  runId: string;
  inputDigest: string;
  source: ApprovalSource | "workflow";
  /** When it was asked (ISO 8601, the `approval.requested` event's time). */
  requestedAt: string;
  status: "pending" | ApprovalEndStatus;
  /** The decider's reason, when one was given. */
  reason?: string;
  /** When it was decided (ISO 8601). */
  decidedAt?: string;
  /** True once the call's result is logged (`tool.ended`). */
  settled: boolean;
}

/** A summary model call (compaction, branch summary) logged as started and not ended. */
export interface OpenSummary {
  summaryId: string;
  kind: "compaction" | "branch_summary";
  /** `metadata.owner` of `summary.started`. */
  owner: unknown;
  startedVersion: number;
}

/** A typed agent's invocation logged as started and not ended (`agent.started`). */
export interface OpenInvocation {
  agent: string;
  invocationId: string;
  /**
   * Repairs and usage of the invocation's messages so far (all its runs). Absent in a state stored before it was folded (a head or snapshot of an
   * older version): read as unknown.
   */
  totals?: AnswerTotals;
  /** The invocation's last run (`run.started` while it is open), that run's `metadata.owner`, and its `run.ended` once logged. */
  lastRun?: { runId: string; owner: unknown; ended?: ArborEventData<"run.ended"> };
}

/** The activity projection (see the module contract). Plain JSON. */
export interface SessionActivity {
  /** Stream version of the last folded event (0: none). */
  version: number;
  runs: RunRecord[];
  openRun?: OpenRun;
  queues: { steering: AgentMessage[]; followUp: AgentMessage[]; passive: AgentMessage[] };
  approvals: ApprovalRecord[];
  summaries: OpenSummary[];
  /** The open typed-agent invocation, if any. */
  invocation?: OpenInvocation;
  /** `metadata.workflowId` of `session.created`: the session is a workflow's agent step. */
  workflowId?: string;
}

/** The open run's calls without a result: its carried calls (rebuilt from their approvals: id and name), then those of its own messages. */
export function unansweredCalls(open: OpenRun): ToolCall[] {
  const answered = new Set(open.results);
  const own = new Set(open.calls.map((call) => call.id));
  const carried = (open.carried ?? []).filter((call) => !own.has(call.id)).map((call): ToolCall => ({ type: "toolCall", id: call.id, name: call.name, arguments: {} }));
  return [...carried, ...open.calls].filter((call) => !answered.has(call.id));
}

/** The activity of a stream with no event. */
export function emptyActivity(): SessionActivity {
  return { version: 0, runs: [], queues: { steering: [], followUp: [], passive: [] }, approvals: [], summaries: [] };
}

function withRun(state: SessionActivity, update: (run: OpenRun) => OpenRun | undefined): SessionActivity {
  if (!state.openRun) return state;
  const openRun = update(state.openRun);
  return openRun === undefined ? state : { ...state, openRun };
}

function foldEntry(run: OpenRun, entry: SessionEntry): OpenRun | undefined {
  if (!isKnownEntry(entry) || entry.type !== "message") return undefined;
  const { message } = entry;
  if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted") {
    const calls = message.content.filter((block): block is ToolCall => block.type === "toolCall");
    // The open turn has its complete reply (a continuation does not call the model again for it).
    const replied = run.openTurn && !run.openTurn.replied ? { ...run, openTurn: { ...run.openTurn, replied: true } } : run;
    return calls.length > 0 ? { ...replied, calls: [...run.calls, ...calls] } : replied === run ? undefined : replied;
  }
  if (message.role === "toolResult") return { ...run, results: [...run.results, message.toolCallId] };
  return undefined;
}

function withInvocationEntry(state: SessionActivity, entry: SessionEntry): SessionActivity {
  const { invocation } = state;
  if (!invocation) return state;
  const before = invocation.totals ?? emptyAnswerTotals();
  const totals = addEntryToAnswerTotals(before, entry);
  return totals === before && invocation.totals ? state : { ...state, invocation: { ...invocation, totals } };
}

function foldDelta(run: OpenRun, delta: ArborEventData<"message.delta">): OpenRun | undefined {
  const position = run.openMessages.findIndex((message) => message.messageId === delta.messageId);
  if (position < 0) return undefined;
  const message = run.openMessages[position];
  const at = message.blocks.findIndex((block) => block.contentIndex === delta.contentIndex);
  const blocks = [...message.blocks];
  if (at < 0) {
    const block: StreamedBlock = { contentIndex: delta.contentIndex, kind: delta.kind, text: delta.delta };
    if (delta.toolCallId !== undefined) block.toolCallId = delta.toolCallId;
    if (delta.toolName !== undefined) block.toolName = delta.toolName;
    blocks.push(block);
  } else {
    const old = blocks[at];
    const block: StreamedBlock = { ...old, text: old.text + delta.delta };
    if (block.toolCallId === undefined && delta.toolCallId !== undefined) block.toolCallId = delta.toolCallId;
    if (block.toolName === undefined && delta.toolName !== undefined) block.toolName = delta.toolName;
    blocks[at] = block;
  }
  const openMessages = [...run.openMessages];
  openMessages[position] = { ...message, blocks };
  return { ...run, openMessages };
}

function foldRunDetail(state: SessionActivity, event: StoredEvent): SessionActivity {
  if (isEventOfType(event, "turn.started")) return withRun(state, (run) => ({ ...run, openTurn: { turnId: event.data.turnId, index: event.data.index }, lastTurnIndex: event.data.index }));
  if (isEventOfType(event, "turn.ended")) {
    return withRun(state, (run) => {
      if (!run.openTurn) return undefined;
      const { openTurn: _, ...rest } = run;
      return rest;
    });
  }
  if (isEventOfType(event, "message.started")) {
    return withRun(state, (run) => ({ ...run, openMessages: [...run.openMessages.filter((message) => message.messageId !== event.data.messageId), { messageId: event.data.messageId, role: event.data.role, blocks: [] }] }));
  }
  if (isEventOfType(event, "message.ended")) {
    return withRun(state, (run) => (run.openMessages.some((message) => message.messageId === event.data.messageId) ? { ...run, openMessages: run.openMessages.filter((message) => message.messageId !== event.data.messageId) } : undefined));
  }
  if (isEventOfType(event, "message.delta")) return withRun(state, (run) => foldDelta(run, event.data));
  if (isEventOfType(event, "entry.appended")) return withRun(withInvocationEntry(state, event.data.entry), (run) => foldEntry(run, event.data.entry));
  if (isEventOfType(event, "tool.updated")) {
    const { process } = event.data;
    return process ? withRun(state, (run) => ({ ...run, processes: { ...run.processes, [event.data.toolCallId]: process } })) : state;
  }
  return state;
}

function foldApprovalEvent(state: SessionActivity, event: StoredEvent): SessionActivity {
  if (isEventOfType(event, "approval.requested")) {
    const { data } = event;
    const record: ApprovalRecord = {
      toolCallId: data.toolCallId,
      toolName: data.toolName,
      runId: data.runId,
      inputDigest: data.inputDigest,
      source: data.source,
      requestedAt: event.time,
      status: "pending",
      settled: false,
    };
    const at = state.approvals.findIndex((item) => item.toolCallId === data.toolCallId);
    const approvals = [...state.approvals];
    if (at < 0) approvals.push(record);
    else approvals[at] = record;
    const next = { ...state, approvals };
    return withRun(next, (run) => (run.runId === data.runId && !run.gated.includes(data.toolCallId) ? { ...run, gated: [...run.gated, data.toolCallId] } : undefined));
  }
  if (isEventOfType(event, "approval.ended")) {
    const at = state.approvals.findIndex((item) => item.toolCallId === event.data.toolCallId);
    if (at < 0) return state;
    const approvals = [...state.approvals];
    const record: ApprovalRecord = { ...approvals[at], status: event.data.status, decidedAt: event.time };
    if (event.data.reason !== undefined) record.reason = event.data.reason;
    approvals[at] = record;
    return { ...state, approvals };
  }
  if (isEventOfType(event, "tool.ended")) {
    const id = event.data.toolCallId;
    const at = state.approvals.findIndex((item) => item.toolCallId === id);
    let next = state;
    if (at >= 0 && !state.approvals[at].settled) {
      const approvals = [...state.approvals];
      approvals[at] = { ...approvals[at], settled: true };
      next = { ...state, approvals };
    }
    return withRun(next, (run) => (run.gated.includes(id) ? { ...run, gated: run.gated.filter((gatedId) => gatedId !== id) } : undefined));
  }
  return state;
}

function foldQueue(state: SessionActivity, data: ArborEventData<"queue.changed">): SessionActivity {
  const queue = state.queues[data.queue];
  if (!queue) return state;
  let next: AgentMessage[];
  if (data.action === "enqueued" && data.message) next = [...queue, data.message];
  else if (data.action === "dequeued") next = queue.slice(Math.max(0, queue.length - data.size));
  else if (data.action === "cleared") next = [];
  else return state;
  return { ...state, queues: { ...state.queues, [data.queue]: next } };
}

function foldEvent(state: SessionActivity, event: StoredEvent): SessionActivity {
  if (isEventOfType(event, "run.started")) {
    const { runId } = event.data;
    const asked = state.runs.at(-1);
    const carried =
      event.data.kind === "resume" && asked?.status === "suspended"
        ? state.approvals.filter((item) => item.runId === asked.runId && item.status === "approved" && !item.settled).map((item) => ({ id: item.toolCallId, name: item.toolName }))
        : [];
    const openRun: OpenRun = {
      runId,
      startedVersion: event.version,
      owner: event.metadata.owner,
      model: { ...event.data.model },
      ...(event.data.policy ? { policy: event.data.policy } : {}),
      openMessages: [],
      calls: [],
      results: [],
      gated: [],
      processes: {},
      ...(carried.length > 0 ? { carried } : {}),
    };
    const invocation = state.invocation && { ...state.invocation, lastRun: { runId, owner: event.metadata.owner } };
    return { ...state, runs: [...state.runs, { runId, status: "open", startedVersion: event.version, ...(event.data.policy ? { policy: event.data.policy } : {}) }], openRun, ...(invocation ? { invocation } : {}) };
  }
  if (isEventOfType(event, "run.resumed")) {
    // Another process continues the run (`docs/durability.md`): it is the owner from now on.
    if (state.openRun?.runId !== event.data.runId) return state;
    const owner = event.metadata.owner;
    const invocation = state.invocation?.lastRun?.runId === event.data.runId ? { ...state.invocation, lastRun: { ...state.invocation.lastRun, owner } } : state.invocation;
    return { ...state, openRun: { ...state.openRun, owner }, ...(invocation ? { invocation } : {}) };
  }
  if (isEventOfType(event, "run.ended")) {
    if (state.openRun?.runId !== event.data.runId) return state;
    const runs = [...state.runs];
    runs[runs.length - 1] = { ...runs[runs.length - 1], status: event.data.status, endedVersion: event.version };
    const { openRun: _, ...rest } = state;
    const { invocation } = state;
    const lastRun = invocation?.lastRun?.runId === event.data.runId ? { ...invocation.lastRun, ended: event.data } : undefined;
    return { ...rest, runs, ...(invocation && lastRun ? { invocation: { ...invocation, lastRun } } : {}) };
  }
  if (isEventOfType(event, "queue.changed")) return foldQueue(state, event.data);
  if (isEventOfType(event, "summary.started")) {
    const { summaryId, kind } = event.data;
    return { ...state, summaries: [...state.summaries.filter((item) => item.summaryId !== summaryId), { summaryId, kind, owner: event.metadata.owner, startedVersion: event.version }] };
  }
  if (isEventOfType(event, "summary.ended")) {
    const { summaryId } = event.data;
    return state.summaries.some((item) => item.summaryId === summaryId) ? { ...state, summaries: state.summaries.filter((item) => item.summaryId !== summaryId) } : state;
  }
  if (isEventOfType(event, "approval.requested", "approval.ended", "tool.ended")) return foldApprovalEvent(state, event);
  if (isEventOfType(event, "agent.started")) return { ...state, invocation: { agent: event.data.agent, invocationId: event.data.invocationId, totals: emptyAnswerTotals() } };
  if (isEventOfType(event, "agent.ended")) {
    if (state.invocation?.invocationId !== event.data.invocationId) return state;
    const { invocation: _, ...rest } = state;
    return rest;
  }
  if (isEventOfType(event, "session.created")) {
    const workflowId = event.data.metadata?.workflowId;
    return typeof workflowId === "string" ? { ...state, workflowId } : state;
  }
  return foldRunDetail(state, event);
}

/** Folds one stored event of the session stream (see the module contract). Pure. */
export function foldActivity(state: SessionActivity, event: StoredEvent): SessionActivity {
  const next = foldEvent(state, event);
  return next === state ? { ...state, version: event.version } : { ...next, version: event.version };
}

/** Folds `events` from `from` (default: the empty activity). Pure. */
export function foldActivityAll(events: readonly StoredEvent[], from: SessionActivity = emptyActivity()): SessionActivity {
  let state = from;
  for (const event of events) state = foldActivity(state, event);
  return state;
}

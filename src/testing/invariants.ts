/**
 * The invariants the agent test kit checks on every path (`docs/architecture.md`'s promises): `calls-paired`, `no-tool-after-abort`,
 * `replay-equals-live` (the log re-read from scratch equals the live projection) and `explained-before` (no event precedes what explains it; commit
 * before effect). A user's check throws to fail. {@link checkInvariants} runs them on a path, against the session read again from its log.
 */
import { isKnownEntry, messageOfEntry } from "../core/entries.ts";
import type { StoredEvent } from "../store/event-log.ts";
import { isArborEvent, isEventOfType } from "../store/events/catalogue.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import { createSqliteEventLog } from "../store/sqlite/sqlite-event-log.ts";
import type { SessionView } from "../store/session-types.ts";
import type { ToolExecutionRecord } from "./path-fixtures.ts";

/**
 * What an invariant sees of one executed path. `events` are the session's stored events in
 * version order; `live` the harness's projection; `replayed` the same session read from scratch.
 * @example
 * const check = ({ events }: InvariantContext) => events.filter((event) => event.type === "run.ended").length;
 */
export interface InvariantContext {
  sessionId: string;
  events: StoredEvent[];
  live: SessionView;
  replayed: SessionView;
  /** Every execution of a (wrapped) user tool, in start order. */
  executions: ToolExecutionRecord[];
  /** The tool calls left waiting for approval when the path ended. */
  pendingToolCallIds: string[];
  /** The path's steps, readable. */
  steps: string[];
}

/**
 * A named check over an executed path; `check` throws (or rejects) to report a violation.
 * @example
 * const oneRun: AgentInvariant = { name: "one-run", check: ({ events }) => { if (events.filter((e) => e.type === "run.started").length > 2) throw new Error("more than two runs"); } };
 */
export interface AgentInvariant {
  name: string;
  check: (context: InvariantContext) => void | Promise<void>;
}

/** The keys that tie an event to the one that explains it. */
const KEYS = ["runId", "turnId", "messageId", "toolCallId"] as const;
type Key = (typeof KEYS)[number];

/** The ids an event of the catalogue carries under {@link KEYS} (none for user-registered types). */
function idsOf(event: StoredEvent): Partial<Record<Key, string>> {
  const ids: Partial<Record<Key, string>> = {};
  if (!isArborEvent(event)) return ids;
  const fields = new Map(Object.entries(event.data));
  for (const key of KEYS) {
    const value: unknown = fields.get(key);
    if (typeof value === "string") ids[key] = value;
  }
  return ids;
}

function fail(message: string): never {
  throw new Error(message);
}

const callsPaired: AgentInvariant = {
  name: "calls-paired",
  check: ({ live, events, pendingToolCallIds }) => {
    const pending = new Set(pendingToolCallIds);
    const results = new Map<string, number>();
    const calls: string[] = [];
    const stored = live.getEntries().flatMap((entry) => messageOfEntry(entry) ?? []);
    for (const message of stored) {
      if (message.role === "toolResult") results.set(message.toolCallId, (results.get(message.toolCallId) ?? 0) + 1);
      if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted") {
        for (const block of message.content) if (block.type === "toolCall") calls.push(block.id);
      }
    }
    for (const id of calls) {
      const count = results.get(id) ?? 0;
      if (pending.has(id) ? count !== 0 : count !== 1) fail(`tool call ${id} has ${count} results${pending.has(id) ? " while it waits for approval" : ""}`);
    }
    const diagnostics = live.buildContext().diagnostics.filter((diagnostic) => !(diagnostic.toolCallId && pending.has(diagnostic.toolCallId)));
    if (diagnostics.length) fail(`the context needed repairs: ${diagnostics.map((diagnostic) => `${diagnostic.kind} ${diagnostic.toolCallId ?? ""}`.trim()).join(", ")}`);
    const started = new Map<string, number>();
    const ended = new Map<string, number>();
    for (const event of events) {
      if (isEventOfType(event, "tool.started")) started.set(event.data.toolCallId, (started.get(event.data.toolCallId) ?? 0) + 1);
      if (isEventOfType(event, "tool.ended")) ended.set(event.data.toolCallId, (ended.get(event.data.toolCallId) ?? 0) + 1);
    }
    for (const [id, count] of started) {
      if (count !== 1) fail(`tool call ${id} has ${count} tool.started events`);
      const ends = ended.get(id) ?? 0;
      if (pending.has(id) ? ends !== 0 : ends !== 1) fail(`tool call ${id} has ${ends} tool.ended events`);
    }
  },
};

const ABORT_MARKS = (event: StoredEvent) =>
  (isEventOfType(event, "tool.ended") && ["aborted", "skipped"].includes(event.data.outcome)) ||
  (isEventOfType(event, "message.ended") && event.data.stopReason === "aborted") ||
  (isEventOfType(event, "retry.ended") && event.data.error === "Retry cancelled") ||
  (isEventOfType(event, "run.ended") && event.data.status === "aborted");

const noToolAfterAbort: AgentInvariant = {
  name: "no-tool-after-abort",
  check: ({ events, executions }) => {
    const late = executions.filter((execution) => execution.afterAbort);
    if (late.length) fail(`tool ${late.map((execution) => `${execution.toolName} (${execution.toolCallId})`).join(", ")} started after the abort`);
    const abortedRuns = new Set<string>();
    for (const event of events) {
      const runId = event.metadata?.runId as string | undefined;
      if (runId === undefined) continue;
      if (ABORT_MARKS(event)) abortedRuns.add(runId);
      else if (isEventOfType(event, "tool.started") && abortedRuns.has(runId)) fail(`tool.started of ${event.data.toolCallId} (version ${event.version}) follows the abort of run ${runId}`);
    }
  },
};

const replayEqualsLive: AgentInvariant = {
  name: "replay-equals-live",
  check: ({ live, replayed }) => {
    const shape = (view: SessionView) => ({ leafId: view.leafId, entries: view.getEntries(), context: view.buildContext() });
    const left = JSON.stringify(shape(live));
    const right = JSON.stringify(shape(replayed));
    if (left === right) return;
    let at = 0;
    while (at < left.length && left[at] === right[at]) at++;
    fail(`the session replayed from the log differs from the live projection at character ${at}: live …${left.slice(Math.max(0, at - 40), at + 60)}… replayed …${right.slice(Math.max(0, at - 40), at + 60)}…`);
  },
};

/** For each event type, the event that must come before it, keyed the same way. */
const EXPLAINED_BY: Record<string, { by: string[]; key: Key }> = {
  "run.ended": { by: ["run.started"], key: "runId" },
  "turn.ended": { by: ["turn.started"], key: "turnId" },
  "message.delta": { by: ["message.started"], key: "messageId" },
  "message.ended": { by: ["message.started"], key: "messageId" },
  "tool.ended": { by: ["tool.started", "approval.requested"], key: "toolCallId" },
  "approval.ended": { by: ["approval.requested"], key: "toolCallId" },
};

const explainedBefore: AgentInvariant = {
  name: "explained-before",
  check: ({ events, executions }) => {
    const seen = new Set<string>();
    const calls = new Set<string>();
    for (const event of events) {
      const ids = idsOf(event);
      const rule = EXPLAINED_BY[event.type];
      if (rule && !rule.by.some((type) => seen.has(`${type}:${ids[rule.key]}`))) fail(`${event.type} of ${ids[rule.key]} (version ${event.version}) comes before its ${rule.by.join(" or ")}`);
      if (event.type === "retry.started" && !seen.has("retry.scheduled:")) fail(`retry.started (version ${event.version}) comes before any retry.scheduled`);
      for (const key of KEYS) if (ids[key] !== undefined) seen.add(`${event.type}:${ids[key]}`);
      if (event.type === "retry.scheduled") seen.add("retry.scheduled:");
      if (isEventOfType(event, "entry.appended")) {
        const entry = event.data.entry;
        const message = isKnownEntry(entry) && entry.type === "message" ? entry.message : undefined;
        if (message?.role === "assistant") for (const block of message.content) if (block.type === "toolCall") calls.add(block.id);
        if (message?.role === "toolResult" && !calls.has(message.toolCallId)) fail(`the result of ${message.toolCallId} (version ${event.version}) comes before the assistant message that calls it`);
      }
    }
    const uncommitted = executions.filter((execution) => execution.real && !execution.startCommitted);
    if (uncommitted.length) fail(`tool ${uncommitted.map((execution) => `${execution.toolName} (${execution.toolCallId})`).join(", ")} ran before its tool.started was committed`);
  },
};

/**
 * Arbor's own invariants, checked on every path before the user's (see the module contract).
 * @example
 * BUILT_IN_INVARIANTS.map((invariant) => invariant.name); // ["calls-paired", "no-tool-after-abort", "replay-equals-live", "explained-before"]
 */
export const BUILT_IN_INVARIANTS: readonly AgentInvariant[] = [callsPaired, noToolAfterAbort, replayEqualsLive, explainedBefore];

/**
 * Checks `invariants` on an executed path, in order: the session is read again from scratch out of a read-only opening of the SQLite log at
 * `logPath` (the context's `replayed` view), and each invariant that throws is reported as `fail(its name, the error's message)`.
 */
export async function checkInvariants(
  logPath: string,
  context: Omit<InvariantContext, "replayed">,
  invariants: readonly AgentInvariant[],
  fail: (check: string, message: string) => void,
): Promise<void> {
  const replayLog = createSqliteEventLog({ path: logPath, readOnly: true });
  try {
    const replayed = await createSessionRepository({ log: replayLog }).open(context.sessionId);
    const full: InvariantContext = { ...context, replayed: replayed.view };
    for (const invariant of invariants) {
      try {
        await invariant.check(full);
      } catch (error) {
        fail(invariant.name, error instanceof Error ? error.message : String(error));
      }
    }
  } finally {
    await replayLog.close();
  }
}

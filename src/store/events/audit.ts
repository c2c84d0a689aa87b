/**
 * The audit stream: run events without content, derived from the log (purista's run events and privacy rule; names per `docs/events.md`). An
 * {@link AuditEvent} holds ids, names, counts, durations (ms, between logged times, so a replay gives the same numbers), statuses, usage and run
 * errors, never a prompt, output, tool input or result, reason text, agent input, elicitation message, requested schema or answer content
 * (`test/store/audit-events.test.ts` plants secrets in each). {@link toAuditEvents} maps a session's logged events in log order, its elicitation
 * stream's events included when they are fed in (`sessionAuditSource`); each names the event it comes from (`version`, and `stream` outside the
 * session stream) and its time (`at`).
 */
import type { Observable, OperatorFunction } from "rxjs";
import { defer, mergeMap } from "../../core/rx.ts";
import type { StoredEvent } from "../event-log.ts";
import type { ArborEvent } from "./catalogue.ts";
import { isArborEvent } from "./catalogue.ts";
import { skipsEvents } from "./event-families.ts";
import { sessionIdOfElicitationStream } from "./elicitation-events.ts";
import { sessionIdOfStream } from "./session-events.ts";
import { ignoreUnknown } from "../../core/exhaustive.ts";

/** Events that make no audit record. */
const auditSkips = skipsEvents(["session", "entry", "leaf", "turn", "queue", "retry", "hook", "summary", "workflow", "step", "workspace", "memory", "task", "control", "budget"], ["run.resumed", "message.delta", "tool.updated"]);

/** Token totals (tokens; `null` when no model call reported that figure). */
export interface AuditUsage {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  total: number | null;
}

/** Fields of every audit event: the session, the run (when inside one), and the logged event it comes from. */
export interface AuditBase {
  sessionId: string;
  runId?: string;
  /** The source event's time (ISO 8601). */
  at: string;
  /** The source event's version in its stream: the session stream, or the one `stream` names. */
  version: number;
  /** The source event's stream when it is not the session stream: `elicitation` (`elicitation-<sessionId>`). */
  stream?: "elicitation";
}

/** One content-free audit event (see the module contract). */
export type AuditEvent = AuditBase &
  (
    | { type: "run.started"; runId: string; kind: string; provider?: string; modelId?: string }
    | {
        type: "run.ended";
        runId: string;
        status: string;
        /** From `run.started` to `run.ended`, ms. */
        durationMs: number;
        turns?: number;
        toolCalls: number;
        modelCalls: number;
        usage: AuditUsage;
        /** A failed run's error (message and code), as logged by `run.ended`. */
        error?: { message: string; code?: string };
        /** `suspended`: how many calls wait for approval. */
        pendingApprovals?: number;
      }
    | { type: "agent.started"; agent: string; invocationId: string; mode: string }
    | { type: "agent.ended"; agent: string; invocationId: string; status: string; durationMs: number; repairs: number; usage: AuditUsage; code?: string }
    | { type: "model.ended"; messageId: string; stopReason?: string; durationMs: number; usage: AuditUsage; error: boolean }
    | { type: "tool.started"; toolCallId: string; toolName: string }
    | { type: "tool.ended"; toolCallId: string; toolName: string; outcome: string; isError: boolean; durationMs: number }
    | { type: "approval.requested"; toolCallId: string; toolName: string; source: string; inputDigest: string }
    | { type: "approval.ended"; toolCallId: string; toolName: string; status: string; waitedMs?: number; hasReason: boolean }
    | ({ type: "elicitation.requested"; server: string; requestDigest: string } & AuditElicitation)
    | ({
        type: "elicitation.answered";
        /** MCP's answer: `accept` (with values, never carried here), `decline` or `cancel`. */
        action: "accept" | "decline" | "cancel";
        /** Who answered: `cli`, `http`, `inspector`, `api`, `terminal`, or `ended` (nobody did before the request or call ended). */
        via: string;
        /** From `elicitation.requested` to `elicitation.answered`, ms; absent when the request was not seen. */
        waitedMs?: number;
      } & AuditElicitation)
  );

/**
 * What an elicitation's audit events name (never its message, schema or answer): its id and where the request came from (on `elicitation.answered`
 * taken from the request, when the projector saw it).
 */
export interface AuditElicitation {
  elicitationId: string;
  /** The MCP server that asked. */
  server?: string;
  /** The tool call that got the request, and the server's name of its tool, when the request recorded them. */
  toolCallId?: string;
  toolName?: string;
}

/**
 * The audit event types, in the order of the module contract.
 *
 * @example
 * ```ts
 * session.auditEvents$.subscribe((event) => console.assert(AUDIT_EVENT_TYPES.includes(event.type)));
 * ```
 */
export const AUDIT_EVENT_TYPES = [
  "run.started",
  "run.ended",
  "agent.started",
  "agent.ended",
  "model.ended",
  "tool.started",
  "tool.ended",
  "approval.requested",
  "approval.ended",
  "elicitation.requested",
  "elicitation.answered",
] as const satisfies readonly AuditEvent["type"][];

const emptyUsage = (): AuditUsage => ({ input: null, output: null, cacheRead: null, cacheWrite: null, total: null });
const addTo = (into: AuditUsage, usage: { input?: number | null; output?: number | null; cacheRead?: number | null; cacheWrite?: number | null; totalTokens?: number | null } | undefined) => {
  if (!usage) return;
  const add = (key: keyof AuditUsage, value: number | null | undefined) => {
    if (typeof value === "number") into[key] = (into[key] ?? 0) + value;
  };
  add("input", usage.input);
  add("output", usage.output);
  add("cacheRead", usage.cacheRead);
  add("cacheWrite", usage.cacheWrite);
  add("total", usage.totalTokens);
};
const since = (start: string | undefined, end: string) => (start === undefined ? 0 : Math.max(0, Date.parse(end) - Date.parse(start)));

/** The value under `key`, removed from the map: a lifecycle's start is needed once, at its end. */
function take<V>(map: Map<string, V>, key: string): V | undefined {
  const value = map.get(key);
  map.delete(key);
  return value;
}

/**
 * A stateful projector: feed it a session's events in log order, it returns the audit events each one gives (often none).
 *
 * @example
 * ```ts
 * const project = createAuditProjector();
 * for (const event of events) for (const audit of project(event)) console.log(audit.type);
 * ```
 */
export function createAuditProjector(): (event: StoredEvent) => AuditEvent[] {
  const runs = new Map<string, { at: string; toolCalls: number; modelCalls: number; usage: AuditUsage }>();
  const messages = new Map<string, string>();
  const agents = new Map<string, string>();
  const approvals = new Map<string, string>();
  const elicitations = new Map<string, { at: string; runId?: string; named: AuditElicitation }>();
  return (stored) => {
    if (!isArborEvent(stored)) return [];
    const event: ArborEvent = stored;
    const runId = typeof event.metadata?.runId === "string" ? event.metadata.runId : undefined;
    const elicitationOf = sessionIdOfElicitationStream(event.streamId);
    const elicitation = elicitationOf !== undefined;
    const base: AuditBase = {
      sessionId: elicitationOf ?? sessionIdOfStream(event.streamId) ?? event.streamId,
      at: event.time,
      version: event.version,
      ...(runId ? { runId } : {}),
      ...(elicitation ? { stream: "elicitation" as const } : {}),
    };
    const run = runId ? runs.get(runId) : undefined;
    if (auditSkips(event)) return [];
    switch (event.type) {
      case "run.started":
        runs.set(event.data.runId, { at: event.time, toolCalls: 0, modelCalls: 0, usage: emptyUsage() });
        return [{ ...base, type: "run.started", runId: event.data.runId, kind: event.data.kind, ...(event.data.model ? { provider: event.data.model.provider, modelId: event.data.model.modelId } : {}) }];
      case "run.ended": {
        const data = event.data;
        const state = take(runs, data.runId);
        return [
          {
            ...base,
            type: "run.ended",
            runId: data.runId,
            status: data.status,
            durationMs: since(state?.at, event.time),
            ...(data.status === "done" ? { turns: data.turns } : {}),
            toolCalls: state?.toolCalls ?? 0,
            modelCalls: state?.modelCalls ?? 0,
            usage: state?.usage ?? emptyUsage(),
            ...(data.status === "failed" ? { error: { message: data.error, ...(data.code ? { code: data.code } : {}) } } : {}),
            ...(data.status === "suspended" ? { pendingApprovals: data.pendingToolCallIds.length } : {}),
          },
        ];
      }
      case "message.started":
        if (event.data.role === "assistant") messages.set(event.data.messageId, event.time);
        return [];
      case "message.ended": {
        if (event.data.role !== "assistant") return [];
        const usage = emptyUsage();
        addTo(usage, event.data.usage);
        if (run) {
          run.modelCalls += 1;
          addTo(run.usage, event.data.usage);
        }
        const startedAt = take(messages, event.data.messageId);
        return [
          {
            ...base,
            type: "model.ended",
            messageId: event.data.messageId,
            ...(event.data.stopReason ? { stopReason: event.data.stopReason } : {}),
            durationMs: since(startedAt, event.time),
            usage,
            error: event.data.stopReason === "error" || event.data.errorMessage !== undefined,
          },
        ];
      }
      case "tool.started":
        if (run) run.toolCalls += 1;
        return [{ ...base, type: "tool.started", toolCallId: event.data.toolCallId, toolName: event.data.toolName }];
      case "tool.ended":
        return [{ ...base, type: "tool.ended", toolCallId: event.data.toolCallId, toolName: event.data.toolName, outcome: event.data.outcome, isError: event.data.isError, durationMs: event.data.durationMs }];
      case "approval.requested":
        approvals.set(event.data.toolCallId, event.time);
        return [{ ...base, type: "approval.requested", toolCallId: event.data.toolCallId, toolName: event.data.toolName, source: event.data.source, inputDigest: event.data.inputDigest }];
      case "approval.ended": {
        const requestedAt = take(approvals, event.data.toolCallId);
        return [
          {
            ...base,
            type: "approval.ended",
            toolCallId: event.data.toolCallId,
            toolName: event.data.toolName,
            status: event.data.status,
            ...(requestedAt !== undefined ? { waitedMs: since(requestedAt, event.time) } : {}),
            hasReason: event.data.reason !== undefined && event.data.reason !== "",
          },
        ];
      }
      case "elicitation.requested": {
        const { elicitationId, server, toolCallId, toolName } = event.data;
        const named: AuditElicitation = { elicitationId, server, ...(toolCallId !== undefined ? { toolCallId } : {}), ...(toolName !== undefined ? { toolName } : {}) };
        const requestRunId = event.data.runId ?? runId;
        elicitations.set(elicitationId, { at: event.time, named, ...(requestRunId ? { runId: requestRunId } : {}) });
        return [{ ...base, ...(requestRunId ? { runId: requestRunId } : {}), type: "elicitation.requested", ...named, server, requestDigest: event.data.requestDigest }];
      }
      case "elicitation.answered": {
        const request = take(elicitations, event.data.elicitationId);
        const named = request?.named ?? { elicitationId: event.data.elicitationId };
        return [
          {
            ...base,
            ...(request?.runId && !base.runId ? { runId: request.runId } : {}),
            type: "elicitation.answered",
            ...named,
            action: event.data.action,
            via: event.data.via,
            ...(request ? { waitedMs: since(request.at, event.time) } : {}),
          },
        ];
      }
      case "agent.started":
        agents.set(event.data.invocationId, event.time);
        return [{ ...base, type: "agent.started", agent: event.data.agent, invocationId: event.data.invocationId, mode: event.data.mode }];
      case "agent.ended": {
        const data = event.data;
        const usage = emptyUsage();
        addTo(usage, data.usage);
        const startedAt = take(agents, data.invocationId);
        return [
          {
            ...base,
            type: "agent.ended",
            agent: data.agent,
            invocationId: data.invocationId,
            status: data.status,
            durationMs: since(startedAt, event.time),
            repairs: data.repairs,
            usage,
            ...(data.status === "failed" ? { code: data.code } : {}),
          },
        ];
      }
      default:
        ignoreUnknown(event);
        return [];
    }
  };
}

/**
 * RxJS operator: a session's logged events (in log order) to its audit events. Each subscription gets its own projector (durations and counts start
 * from what it sees). Over `session.events$()` it has no elicitation records; over `sessionAuditSource(log, id)` (both streams in log order) it has.
 *
 * @example
 * ```ts
 * sessionAuditSource(log, session.id).pipe(toAuditEvents()).subscribe((event) => console.log(event.type));
 * ```
 */
export function toAuditEvents(): OperatorFunction<StoredEvent, AuditEvent> {
  return (source: Observable<StoredEvent>) =>
    defer(() => {
      const project = createAuditProjector();
      return source.pipe(mergeMap((event) => project(event)));
    });
}

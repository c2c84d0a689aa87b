/**
 * The telemetry of one session: spans and metrics derived from the events the agent commits plus each model call. The tree is `invoke_agent` per
 * run → `chat` per attempt, `execute_tool` per call and `arbor.compaction`; a run's parent is the prompt's valid `traceparent` (an invalid one warns
 * `INVALID_TRACE_CONTEXT`), else the active context. Status messages hold codes, never content, unless `captureContent`; approvals are not errors and
 * resumed runs link to the requesting runs. Telemetry never changes a run: exporter errors are swallowed.
 */
import type { Context, Link, Span, SpanContext } from "@opentelemetry/api";
import type { Observable, Subscription } from "rxjs";
import type { AgentMessage, ToolResultMessage } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { ArborEvent } from "../store/events/catalogue.ts";
import { createChatSpans } from "./chat-spans.ts";
import { textOf } from "./content.ts";
import type { ResolvedTelemetry, TraceContextInput } from "./options.ts";
import { redact, spanAttributes, spanKind, spanName, type RecordUsage, type SpanOperation, type SpanRecord } from "./span-record.ts";
import { parseTraceContext } from "./trace-context.ts";
import { otelApi, safely } from "./otel-api.ts";
import { skipsEvents } from "../store/events/event-families.ts";
import { ignoreUnknown } from "../core/exhaustive.ts";

/** Events no span or attribute comes from. */
const telemetrySkips = skipsEvents(["session", "leaf", "message", "queue", "hook", "agent", "summary", "workflow", "step", "workspace", "memory", "task", "control", "elicitation", "budget"], ["run.resumed", "turn.started", "tool.updated", "retry.scheduled", "retry.ended"]);

const SCOPE = "arbor-agent";

/** The telemetry of one session (see the module contract). */
export interface SessionTelemetry {
  /** A client whose every `stream()` call is a `chat` span (the same wrapper for the same client). */
  instrument(client: ModelClient): ModelClient;
  /** Sets the parent of the next run: a prompt's trace context, else the caller's active context. */
  nextRun(input?: TraceContextInput, parent?: Context): void;
  /** Follows the events the session's agent commits. */
  observe(events$: Observable<ArborEvent>): void;
  /** Runs `work` as an Arbor operation span; `eager` starts it at once, else only when a model call is made under it (back-dated). */
  operation<T>(operation: "compaction" | "branch_summary", options: { reason?: string; eager?: boolean }, work: () => Promise<T>): Promise<T>;
  /** Ends open spans (a disposed session). */
  close(): void;
}

interface RunState {
  span: Span;
  context: Context;
  record: SpanRecord;
  usage: Required<RecordUsage>;
  tools: Map<string, { span: Span; record: SpanRecord }>;
  /** Ended tool calls whose result entry is still to come (content capture only): ended when it arrives. */
  awaitingResult: Map<string, { span: Span; record: SpanRecord; endTime: number }>;
}

interface OperationState {
  operation: SpanOperation;
  reason?: string;
  startTime: number;
  parent: Context;
  span?: Span;
  context?: Context;
}

/** Creates the telemetry of one session (see the module contract). */
export function createSessionTelemetry(settings: ResolvedTelemetry, session: { sessionId: string; agentName: () => string }): SessionTelemetry {
  const { context: otelContext, ROOT_CONTEXT, SpanStatusCode, trace, metrics } = otelApi();
  const tracer = (settings.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  const meter = (settings.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const { sessionId } = session;
  const attributes = (record: SpanRecord) => spanAttributes(record, settings);
  let pending: { parent: Context; invalid?: string } | undefined;
  let run: RunState | undefined;
  let operation: OperationState | undefined;
  let nextAttempt: number | undefined;
  const toolArguments = new Map<string, unknown>();
  const toolResults = new Map<string, ToolResultMessage>();
  let subscription: Subscription | undefined;

  /** The run span that requested approval of each call still waiting for (or just given) a decision. */
  const approvalRequesters = new Map<string, SpanContext>();
  /** Requesting run spans of the calls decided since the last run started: the next run links to them. */
  let decidedLinks: SpanContext[] = [];
  const start = (record: SpanRecord, parent: Context, startTime?: number, links?: Link[]): Span =>
    tracer.startSpan(spanName(record), { kind: spanKind(record), attributes: attributes(record), ...(startTime !== undefined ? { startTime } : {}), ...(links && links.length > 0 ? { links } : {}) }, parent);
  /** ERROR status: `safe` (class and code, no content), or the redacted `text` when content is captured. */
  const fail = (span: Span, safe: string, text?: string) =>
    span.setStatus({ code: SpanStatusCode.ERROR, message: settings.captureContent && text ? redact(text, settings.secrets) : safe });

  /** The parent of a model call or tool: the open operation, else the run, else the caller's context. */
  const parentNow = (): Context => {
    if (operation) {
      if (!operation.span) {
        operation.span = start({ operation: operation.operation, sessionId, ...(run?.record.runId ? { runId: run.record.runId } : {}), ...(operation.reason ? { reason: operation.reason } : {}) }, operation.parent, operation.startTime);
        operation.context = trace.setSpan(operation.parent, operation.span);
      }
      return operation.context!;
    }
    return run?.context ?? pending?.parent ?? otelContext.active();
  };

  const instrument = createChatSpans({
    settings,
    sessionId,
    meter,
    start,
    fail,
    attributes,
    parentNow,
    run: () => run,
    takeAttempt: () => {
      if (operation || nextAttempt === undefined) return undefined;
      const attempt = nextAttempt;
      nextAttempt = undefined;
      return attempt;
    },
  });

  const onRunStarted = (event: ArborEvent & { type: "run.started" }) => {
    const parent = pending?.parent ?? otelContext.active();
    const invalid = pending?.invalid;
    pending = undefined;
    const record: SpanRecord = {
      operation: "invoke_agent",
      sessionId,
      runId: event.data.runId,
      agentName: session.agentName(),
      ...(event.data.model ? { provider: event.data.model.provider, requestModel: event.data.model.modelId } : {}),
      ...(settings.captureContent ? { content: {} } : {}),
    };
    const links: Link[] = event.data.kind === "resume" ? decidedLinks.map((context) => ({ context, attributes: { "arbor.link.type": "approval.requested" } })) : [];
    decidedLinks = [];
    const span = start(record, parent, undefined, links);
    if (invalid) span.setAttribute("arbor.trace_context.invalid", redact(invalid, settings.secrets));
    run = { span, context: trace.setSpan(parent, span), record, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, tools: new Map(), awaitingResult: new Map() };
  };

  const endTool = (toolCallId: string, data: { toolName: string; isError: boolean; outcome: string; entryId?: string }) => {
    const open = run?.tools.get(toolCallId) ?? (run ? { span: start(toolRecord(toolCallId, data.toolName), run.context), record: toolRecord(toolCallId, data.toolName) } : undefined);
    if (!open || !run) return;
    run.tools.delete(toolCallId);
    const record: SpanRecord = { ...open.record, status: data.outcome, ...(data.isError ? { errorType: data.outcome === "failed" ? "tool_error" : data.outcome } : {}) };
    if (data.isError) fail(open.span, `${data.toolName}: ${data.outcome}`);
    else if (data.outcome === "awaiting_approval") open.span.setStatus({ code: SpanStatusCode.UNSET });
    if (settings.captureContent && !toolResults.has(toolCallId) && !flushing) {
      // The result entry is committed after `tool.ended` (batch results): end the span when it arrives, at this time.
      run.awaitingResult.set(toolCallId, { span: open.span, record, endTime: Date.now() });
      return;
    }
    finishTool(toolCallId, open.span, record);
  };

  let flushing = false;
  const finishTool = (toolCallId: string, span: Span, record: SpanRecord, endTime?: number) => {
    if (settings.captureContent) {
      const result = toolResults.get(toolCallId);
      record.content = {
        ...(toolArguments.has(toolCallId) ? { toolArguments: JSON.stringify(toolArguments.get(toolCallId)) } : {}),
        ...(result ? { toolResult: textOf(result.content) } : {}),
      };
    }
    toolArguments.delete(toolCallId);
    toolResults.delete(toolCallId);
    span.setAttributes(attributes(record));
    span.end(endTime);
  };

  const flushAwaiting = () => {
    if (!run) return;
    for (const [toolCallId, waiting] of run.awaitingResult) finishTool(toolCallId, waiting.span, waiting.record, waiting.endTime);
    run.awaitingResult.clear();
  };

  const toolRecord = (toolCallId: string, toolName: string): SpanRecord => ({
    operation: "execute_tool",
    sessionId,
    ...(run?.record.runId ? { runId: run.record.runId } : {}),
    toolName,
    toolCallId,
    toolType: "function",
  });

  const onRunEnded = (event: ArborEvent & { type: "run.ended" }) => {
    if (!run) return;
    const current = run;
    flushing = true;
    for (const [toolCallId, open] of current.tools) endTool(toolCallId, { toolName: open.record.toolName ?? "unknown", isError: true, outcome: "interrupted" });
    flushing = false;
    flushAwaiting();
    const data = event.data;
    const record: SpanRecord = {
      ...current.record,
      status: data.status,
      usage: current.usage,
      ...(data.status === "failed"
        ? { errorType: data.code ?? "run_failed" }
        : data.status === "aborted" || data.status === "interrupted" || data.status === "budget_exceeded"
          ? { errorType: data.status }
          : {}),
    };
    current.span.setAttributes(attributes(record));
    // A suspended run (waiting for a tool approval) is not a failure; its continuation is a run of its own.
    if (data.status === "failed") fail(current.span, `failed: ${data.code ?? "run_failed"}`, data.error);
    else if (data.status === "aborted" || data.status === "interrupted") fail(current.span, data.status, data.reason);
    // The limit's name is content-free (no numbers that could identify a customer's spend pattern).
    else if (data.status === "budget_exceeded") fail(current.span, `budget_exceeded: ${data.scope} ${data.limit}`, data.reason);
    current.span.end();
    run = undefined;
  };

  const onEntry = (event: ArborEvent & { type: "entry.appended" }) => {
    const entry = event.data.entry as { type: string; message?: AgentMessage };
    if (entry.type !== "message" || !entry.message) return;
    const message = entry.message;
    if (message.role === "assistant") for (const block of message.content) if (block.type === "toolCall") toolArguments.set(block.id, block.arguments);
    if (message.role === "toolResult") {
      toolResults.set(message.toolCallId, message);
      const waiting = run?.awaitingResult.get(message.toolCallId);
      if (waiting) {
        run!.awaitingResult.delete(message.toolCallId);
        finishTool(message.toolCallId, waiting.span, waiting.record, waiting.endTime);
      }
    }
    if (!settings.captureContent || !run?.record.content) return;
    if (message.role === "user" && run.record.content.input === undefined) run.record.content.input = textOf(message.content);
    if (message.role === "assistant") {
      const text = textOf(message.content);
      if (text !== "") run.record.content.output = text;
    }
  };

  const handle = (event: ArborEvent) =>
    safely(() => {
      if (telemetrySkips(event)) return;
      switch (event.type) {
        case "run.started":
          return onRunStarted(event);
        case "run.ended":
          return onRunEnded(event);
        case "entry.appended":
          return onEntry(event);
        case "retry.started":
          nextAttempt = event.data.attempt;
          return;
        case "tool.started": {
          if (!run) return;
          const record = toolRecord(event.data.toolCallId, event.data.toolName);
          run.tools.set(event.data.toolCallId, { span: start(record, run.context), record });
          return;
        }
        case "tool.ended":
          return endTool(event.data.toolCallId, event.data);
        case "approval.requested": {
          if (!run || event.data.runId !== run.record.runId) return;
          run.span.addEvent("arbor.approval.requested", { "gen_ai.tool.call.id": event.data.toolCallId, "gen_ai.tool.name": event.data.toolName });
          approvalRequesters.set(event.data.toolCallId, run.span.spanContext());
          // The call waits for a decision: not an error, and not interrupted.
          if (run.tools.has(event.data.toolCallId)) endTool(event.data.toolCallId, { toolName: event.data.toolName, isError: false, outcome: "awaiting_approval" });
          return;
        }
        case "approval.ended": {
          const requester = approvalRequesters.get(event.data.toolCallId);
          approvalRequesters.delete(event.data.toolCallId);
          if (requester && !decidedLinks.some((context) => context.spanId === requester.spanId)) decidedLinks.push(requester);
          return;
        }
        case "turn.ended":
          return flushAwaiting();
        default:
          return ignoreUnknown(event);
      }
    });

  return {
    instrument,
    nextRun(input, parent) {
      safely(() => {
        const parsed = parseTraceContext(input);
        if (parsed.invalid) process.emitWarning(`${parsed.invalid}; the run starts a new trace.`, { type: "ArborTelemetryWarning", code: "INVALID_TRACE_CONTEXT" });
        pending = { parent: parsed.context ?? (parsed.invalid ? ROOT_CONTEXT : (parent ?? otelContext.active())), ...(parsed.invalid ? { invalid: parsed.invalid } : {}) };
      });
    },
    observe(events$) {
      subscription?.unsubscribe();
      subscription = events$.subscribe(handle);
    },
    async operation(kind, options, work) {
      const previous = operation;
      const state: OperationState = {
        operation: kind,
        ...(options.reason ? { reason: options.reason } : {}),
        startTime: Date.now(),
        parent: run?.context ?? otelContext.active(),
      };
      operation = state;
      if (options.eager) safely(() => parentNow());
      try {
        const result = await work();
        safely(() => state.span?.end());
        return result;
      } catch (error) {
        safely(() => {
          if (!state.span) return;
          state.span.setAttribute("error.type", (error as { code?: string })?.code ?? "operation_failed");
          fail(state.span, `${error instanceof Error ? error.name : "Error"}: ${(error as { code?: string })?.code ?? "operation_failed"}`, error instanceof Error ? error.message : String(error));
          state.span.end();
        });
        throw error;
      } finally {
        if (operation === state) operation = previous;
      }
    },
    close() {
      subscription?.unsubscribe();
      safely(() => {
        if (run) onRunEnded({ type: "run.ended", data: { runId: run.record.runId ?? "", status: "interrupted", reason: "session disposed" } } as ArborEvent & { type: "run.ended" });
      });
    },
  };
}

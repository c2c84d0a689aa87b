/**
 * W3C trace context given with a prompt, as the parent of the run's root span: a valid `traceparent` (later versions read as `00`) becomes a remote
 * parent; an invalid one is reported and the run starts a new trace; `tracestate` is kept only with a valid `traceparent`.
 */
import type { Context, SpanContext } from "@opentelemetry/api";
import { otelApi } from "./otel-api.ts";
import type { TraceContextInput } from "./options.ts";
import { ignored } from "../core/ignored.ts";

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The outcome of {@link parseTraceContext}: a parent context, or why there is none. */
export interface ParsedTraceContext {
  /** The parent context when `traceparent` was valid. */
  context?: Context;
  /** Why the given `traceparent` was not used (absent when none was given or it was valid). */
  invalid?: string;
}

/** Parses a prompt's trace context (see the module contract). Never throws. */
export function parseTraceContext(input: TraceContextInput | undefined): ParsedTraceContext {
  const header = input?.traceparent;
  if (header === undefined) return {};
  const { createTraceState, isSpanContextValid, ROOT_CONTEXT, trace } = otelApi();
  const text = typeof header === "string" ? header.trim() : "";
  const match = TRACEPARENT.exec(text);
  const shown = JSON.stringify(String(header).slice(0, 80));
  if (!match) return { invalid: `traceparent ${shown} is not version-traceid-parentid-flags (lower-case hex)` };
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === "ff") return { invalid: `traceparent ${shown} has the forbidden version ff` };
  if (version === "00" && rest !== undefined) return { invalid: `traceparent ${shown} has extra fields after the flags (version 00)` };
  const spanContext: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & 1, isRemote: true };
  if (!isSpanContextValid(spanContext)) return { invalid: `traceparent ${shown} has an all-zero trace id or parent id` };
  if (typeof input?.tracestate === "string" && input.tracestate.trim() !== "") {
    try {
      spanContext.traceState = createTraceState(input.tracestate);
    } catch (error) {
      ignored("an unparsable tracestate is dropped; the trace itself continues", error);
    }
  }
  return { context: trace.setSpanContext(ROOT_CONTEXT, spanContext) };
}

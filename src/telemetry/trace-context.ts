/**
 * W3C trace context (`traceparent` / `tracestate`) given with a prompt, turned into the parent
 * context of the run's root span.
 *
 * Contract (W3C Trace Context level 1; the invalid-input rule is @purista/harness's):
 * - a valid `traceparent` (version `00`, or a later version read as `00` with its extra fields
 *   ignored, as the recommendation says) becomes a remote parent: the run's spans share its trace id;
 * - an invalid one (wrong shape, all-zero ids, version `ff`) is reported (`invalid` says why)
 *   and the run starts a new trace; `tracestate` is kept only with a valid `traceparent` and an
 *   unparsable one is dropped (the trace still continues).
 *
 * @example
 * ```ts
 * const parsed = parseTraceContext({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" });
 * parsed.context; // an OTel Context whose span context is remote
 * ```
 */
import { createTraceState, isSpanContextValid, ROOT_CONTEXT, trace, type Context, type SpanContext } from "@opentelemetry/api";
import type { TraceContextInput } from "./options.ts";

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The outcome of {@link parseTraceContext}: a parent context, or why there is none. */
export interface ParsedTraceContext {
  /** The parent context when `traceparent` was valid. */
  context?: Context;
  /** Why the given `traceparent` was not used (absent when none was given or it was valid). */
  invalid?: string;
}

/**
 * Parses a prompt's trace context (see the module contract). Never throws.
 *
 * @example
 * ```ts
 * parseTraceContext({ traceparent: "garbage" }).invalid; // 'traceparent "garbage" is not version-traceid-parentid-flags'
 * ```
 */
export function parseTraceContext(input: TraceContextInput | undefined): ParsedTraceContext {
  const header = input?.traceparent;
  if (header === undefined) return {};
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
    } catch {
      // An unparsable tracestate is dropped; the trace itself continues.
    }
  }
  return { context: trace.setSpanContext(ROOT_CONTEXT, spanContext) };
}

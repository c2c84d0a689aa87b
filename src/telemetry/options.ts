/**
 * Telemetry options of the harness: on by default through `@opentelemetry/api` only (no-ops until the application registers an SDK), `false` turns
 * it off; `flavor` `both` (default), `gen_ai_only` or `openinference_only`; `captureContent` (default false); known secrets are redacted from every
 * attribute either way; `agentName` names `invoke_agent` spans (default `arbor`).
 */
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";

/** Which attribute namespaces spans carry: both (default), OTel GenAI only, or OpenInference only. */
export type TelemetryFlavor = "both" | "gen_ai_only" | "openinference_only";

/** The `telemetry` option of `createHarness` (see the module contract). */
export interface TelemetryOptions {
  /** Default: the global tracer provider of `@opentelemetry/api` (a no-op until an SDK registers one). */
  tracerProvider?: TracerProvider;
  /** Default: the global meter provider of `@opentelemetry/api`. */
  meterProvider?: MeterProvider;
  /** Default `both`. */
  flavor?: TelemetryFlavor;
  /** Capture messages, system instructions, tool arguments and results (default false). */
  captureContent?: boolean;
  /** Name on `invoke_agent` spans when the session's metadata names no `agent` (default `arbor`). */
  agentName?: string;
}

/** Trace context given with one prompt: W3C `traceparent` and `tracestate` header values. */
export interface TraceContextInput {
  /** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
  traceparent?: string;
  tracestate?: string;
}

/** Telemetry options after defaults. */
export interface ResolvedTelemetry {
  tracerProvider?: TracerProvider;
  meterProvider?: MeterProvider;
  flavor: TelemetryFlavor;
  captureContent: boolean;
  agentName: string;
  /** Values redacted from every attribute (at least 6 characters, longest first). */
  secrets: string[];
}

/** The flavors, for validation. */
export const TELEMETRY_FLAVORS = ["both", "gen_ai_only", "openinference_only"] as const;

/** Applies the defaults; `false` gives undefined (no telemetry). */
export function resolveTelemetry(options: TelemetryOptions | false | undefined, secrets: readonly string[] = []): ResolvedTelemetry | undefined {
  if (options === false) return undefined;
  const given = options ?? {};
  return {
    ...(given.tracerProvider ? { tracerProvider: given.tracerProvider } : {}),
    ...(given.meterProvider ? { meterProvider: given.meterProvider } : {}),
    flavor: given.flavor ?? "both",
    captureContent: given.captureContent ?? false,
    agentName: given.agentName ?? "arbor",
    secrets: [...new Set(secrets.filter((secret) => typeof secret === "string" && secret.length >= 6))].sort((a, b) => b.length - a.length),
  };
}

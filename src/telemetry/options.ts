/**
 * Telemetry options of the harness (`AgentHarnessOptions.telemetry`) and their resolution.
 *
 * Contract (ours; the flavor and content switches follow @purista/harness's `telemetry({ flavor,
 * contentCaptureMode })`):
 * - telemetry is on by default and goes through `@opentelemetry/api` only: the global tracer and
 *   meter providers, which are no-ops until the application registers an SDK; `false` turns it off;
 * - `flavor`: `both` (default) emits the OTel GenAI attributes and the OpenInference ones,
 *   `gen_ai_only` / `openinference_only` one namespace; span names, kinds, `error.type` and
 *   the `arbor.*` attributes are the same in every flavor;
 * - `captureContent` (default false) adds messages, system instructions and tool arguments and
 *   results; values the harness knows as secrets are redacted from every attribute either way;
 * - `agentName` names the `invoke_agent` span when the session has no `agent` in its metadata
 *   (typed agents put their name there); default `arbor`.
 *
 * @example
 * ```ts
 * const harness = await createHarness({ models, telemetry: { flavor: "gen_ai_only", captureContent: true } });
 * ```
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

/**
 * Applies the defaults; `false` gives undefined (no telemetry).
 *
 * @example
 * ```ts
 * resolveTelemetry(undefined, []).flavor; // "both"
 * ```
 */
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

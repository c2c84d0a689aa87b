/**
 * The CLI's OpenTelemetry exporter: the standard `OTEL_EXPORTER_OTLP_*` variables turn on an OTLP
 * trace exporter for the commands that run a model (`run`, `chat`, `compact`, `checkout
 * --summarize`, `serve`).
 *
 * Contract (ours; variable names and their meaning are the OTel SDK environment specification's):
 * - nothing is loaded unless `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 *   is set (and `OTEL_SDK_DISABLED` is not `true`): then `@opentelemetry/sdk-trace-base` and the
 *   protocol's exporter are imported dynamically, only the one asked for;
 * - the exporter reads the endpoint (`/v1/traces` appended to the generic one), headers and
 *   timeout from the environment itself; the protocol (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
 *   `OTEL_EXPORTER_OTLP_PROTOCOL`) is `http/protobuf` (`@opentelemetry/exporter-trace-otlp-proto`;
 *   also what an unset protocol means, as in the SDK environment specification) or `http/json`
 *   (`@opentelemetry/exporter-trace-otlp-http`); `grpc` and anything else are refused with a
 *   `CliError` (exit 2) naming the ones supported;
 * - `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` turns on content capture,
 *   `ARBOR_TELEMETRY_FLAVOR` picks the flavor (`both`, `gen_ai_only`, `openinference_only`);
 * - `shutdown()` flushes the batch of spans (the harness's `close()` calls it).
 *
 * @example
 * ```ts
 * const otel = await loadCliTelemetry(process.env);
 * const harness = await createHarness({ ...options, ...(otel ? { telemetry: otel.telemetry } : {}) });
 * ```
 */
import type { TelemetryFlavor, TelemetryOptions } from "../telemetry/options.ts";
import { TELEMETRY_FLAVORS } from "../telemetry/options.ts";
import { CliError } from "./cli-error.ts";

/** The loaded exporter: harness options and the flush at exit. */
export interface CliTelemetry {
  telemetry: TelemetryOptions;
  shutdown(): Promise<void>;
}

/**
 * Loads the exporter when the environment asks for one (see the module contract).
 *
 * @throws CliError (exit 2) for an unsupported protocol or flavor.
 * @example
 * ```ts
 * await loadCliTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" });
 * ```
 */
export async function loadCliTelemetry(env: NodeJS.ProcessEnv): Promise<CliTelemetry | undefined> {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf").trim();
  if (protocol !== "http/json" && protocol !== "http/protobuf") {
    throw new CliError(
      `OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}" is not supported: Arbor's CLI exports spans over OTLP/HTTP; set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (the default) or http/json.`,
    );
  }
  const flavor = (env.ARBOR_TELEMETRY_FLAVOR?.trim() || "both") as TelemetryFlavor;
  if (!(TELEMETRY_FLAVORS as readonly string[]).includes(flavor)) {
    throw new CliError(`ARBOR_TELEMETRY_FLAVOR "${flavor}" is not one of ${TELEMETRY_FLAVORS.join(", ")}.`);
  }
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    protocol === "http/protobuf" ? import("@opentelemetry/exporter-trace-otlp-proto") : import("@opentelemetry/exporter-trace-otlp-http"),
  ]);
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  return {
    telemetry: { tracerProvider, flavor, captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true" },
    async shutdown() {
      try {
        await tracerProvider.shutdown();
      } catch (error) {
        process.stderr.write(`arbor: could not export spans: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    },
  };
}

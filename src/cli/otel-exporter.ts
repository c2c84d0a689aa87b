/**
 * The CLI's OpenTelemetry exporter: nothing is loaded unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces one) is set; then the OTLP exporter of the
 * protocol asked for (`http/protobuf` by default, or `http/json`; others are a `CliError`) is imported dynamically and reads the standard variables
 * itself. `shutdown()` flushes the spans.
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
 * @throws CliError (exit 2) for an unsupported protocol or flavor.
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

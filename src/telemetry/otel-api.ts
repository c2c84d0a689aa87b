/**
 * The OpenTelemetry API, required on first use (a session opened with telemetry on, a prompt's trace context) rather than when the root entry
 * is imported. Its Node build is CommonJS, the one `import "@opentelemetry/api"` loads too, so this is the same instance an application
 * registers its providers with (and the API keeps its registrations on a global either way). Calls into it go through {@link safely}: telemetry
 * never changes a run, so an exporter's throw is dropped.
 */
import type * as OtelApi from "@opentelemetry/api";
import { ignored } from "../core/ignored.ts";
import { lazyRequire } from "../core/lazy-require.ts";

/** The `@opentelemetry/api` module, loaded on the first call. */
export const otelApi = lazyRequire<typeof OtelApi>("@opentelemetry/api");

/** Runs `work`, dropping (and counting, `ignored`) what an exporter throws. */
export function safely(work: () => void): void {
  try {
    work();
  } catch (error) {
    ignored("a telemetry exporter threw; telemetry never changes a run", error);
  }
}

/**
 * Loading a CommonJS package on its first use, synchronously (`createRequire`), so that a
 * module whose API is synchronous (defining a JSON-Schema tool, parsing front matter, creating
 * a PostgreSQL log) does not load the package when the root entry is imported. Only for
 * packages with a CommonJS build (ajv, pg, yaml, diff, ignore, the OpenTelemetry API, rxjs's modules), resolved from this package's own
 * `node_modules`; for a CommonJS-only package it is the same instance an `import` gives.
 */
import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

/**
 * A getter that loads `specifier` on its first call and returns the same exports after.
 * A missing package throws Node's `MODULE_NOT_FOUND` error at that call.
 */
export function lazyRequire<Exports>(specifier: string): () => Exports {
  let loaded: Exports | undefined;
  return () => (loaded ??= load(specifier) as Exports);
}

/**
 * Errors Arbor drops on purpose: best-effort cleanup, observers whose failure must not change a
 * run, fallbacks where a failed probe means "absent". Each drop names why it is safe, is counted
 * by that reason, and is written to the `arbor` debug log (`NODE_DEBUG=arbor`, node's
 * `util.debuglog`). An error that matters is handled where it happens, never passed here.
 */
import { debuglog, inspect } from "node:util";

const log = debuglog("arbor");
const counts = new Map<string, number>();

/** Records one dropped `error`; `reason` says why dropping it is safe. */
export function ignored(reason: string, error: unknown): void {
  counts.set(reason, (counts.get(reason) ?? 0) + 1);
  log("ignored error (%s): %s", reason, error instanceof Error ? error.message : inspect(error, { depth: 2 }));
}

/** A rejection handler that records the error (see {@link ignored}) and gives `fallback` (default `undefined`). */
export function ignoreError<T = undefined>(reason: string, fallback?: T): (error: unknown) => T {
  return (error) => {
    ignored(reason, error);
    return fallback as T;
  };
}

/** How many errors were dropped, for `reason` or in all (this process, since it started). */
export function ignoredErrorCount(reason?: string): number {
  if (reason !== undefined) return counts.get(reason) ?? 0;
  let total = 0;
  for (const count of counts.values()) total += count;
  return total;
}

/**
 * The EventLog contract suite as this repository runs it: the exported suite
 * (`arbor-agent/testing`'s `runEventLogContract`) with vitest's functions, plus the suite's
 * fixtures re-exported for the other store tests. Not a test file itself: the
 * `event-log-*.test.ts` files call it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type EventLogFactory, runEventLogContract as runExported } from "../../src/testing/event-log-contract.ts";

export { collect, type EventLogFactory, note, notes, testRegistry } from "../../src/testing/event-log-contract.ts";

/** Runs the exported contract against `factory` under vitest. */
export function runEventLogContract(name: string, factory: EventLogFactory): void {
  runExported(name, factory, { describe, it, expect, afterEach });
}

/**
 * The test-runner surface the exported contract suites need: vitest's `describe`, `it`, `expect` and `afterEach` fit it, and so does any runner with
 * the same matchers. Owning this shape keeps `arbor-agent/testing` free of a dependency on a test framework. Also what the suites share: fresh
 * logs closed after each test ({@link freshLogs}) and waiting for a condition ({@link until}).
 */
import type { EventLog } from "../store/event-log.ts";

/** The matchers the contract suites use; vitest's and Jest's `expect(...)` results satisfy it. */
export interface ContractAssertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toMatch(expected: RegExp | string): void;
  toHaveLength(expected: number): void;
  toBeInstanceOf(expected: abstract new (...args: never[]) => unknown): void;
  toBeGreaterThanOrEqual(expected: number): void;
  toThrow(expected?: unknown): void;
  readonly not: ContractAssertion;
  readonly rejects: {
    toThrow(expected?: unknown): Promise<void>;
    toMatchObject(expected: object): Promise<void>;
  };
}

/**
 * The functions of your test runner that a contract suite registers its tests with.
 * @example
 * import { afterEach, describe, expect, it } from "vitest";
 * import type { ContractTestApi } from "arbor-agent/testing";
 * const api: ContractTestApi = { describe, it, expect, afterEach };
 */
export interface ContractTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>): void;
  expect(actual: unknown): ContractAssertion;
  afterEach(body: () => Promise<void>): void;
}

/** A suite's supply of fresh logs: each call opens one with `open`, and after each test every log it opened is closed. Call it inside `describe`. */
export function freshLogs(open: () => EventLog | Promise<EventLog>, afterEach: ContractTestApi["afterEach"]): () => Promise<EventLog> {
  const opened: EventLog[] = [];
  afterEach(async () => {
    for (const log of opened.splice(0)) await log.close();
  });
  return async () => {
    const log = await open();
    opened.push(log);
    return log;
  };
}

/** Resolves once `condition()` holds, checking every 10 ms; rejects after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

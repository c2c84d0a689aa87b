/**
 * The checked arguments of `append` and `readStream` (ours): what every backend validates before it touches storage, so the three logs refuse the
 * same input with the same `InvalidArgumentError` or `EventSchemaError`; and {@link rejectOnThrow}, by which a write method that checks
 * synchronously still only ever rejects.
 */
import type { AppendOptions, ExpectedVersion, NewEvent, ReadStreamOptions } from "../event-log.ts";
import type { EventRegistry } from "../events/registry.ts";
import { checkExpectedVersionArgument, checkReadStreamOptions, checkStreamId, prepareEvents, type PreparedEvent } from "./log-prepare.ts";

/** An append's checked `expectedVersion` (default `"any"`) and its prepared events; throws as {@link prepareEvents} does. */
export function prepareAppend(
  registry: EventRegistry,
  streamId: string,
  events: readonly NewEvent[],
  options: AppendOptions,
): { expected: ExpectedVersion; prepared: PreparedEvent[] } {
  const expected = options.expectedVersion ?? "any";
  checkExpectedVersionArgument(expected);
  return { expected, prepared: prepareEvents(registry, streamId, events) };
}

/** A checked `readStream` request: its direction, the version it starts at (inclusive) and the most events it returns. */
export interface StreamRange {
  backwards: boolean;
  /** Default: the first version, or the last going backwards (`Number.MAX_SAFE_INTEGER`). */
  fromVersion: number;
  /** Undefined: no limit. */
  limit: number | undefined;
}

/** The range `options` ask of `streamId`; throws `InvalidArgumentError` naming a bad stream id or option. */
export function streamRange(streamId: string, options: ReadStreamOptions): StreamRange {
  checkStreamId(streamId);
  checkReadStreamOptions(options);
  const backwards = options.direction === "backwards";
  return { backwards, fromVersion: options.fromVersion ?? (backwards ? Number.MAX_SAFE_INTEGER : 1), limit: options.limit };
}

/** `start()`'s promise; a synchronous throw of `start` (a refused argument, a closed log) becomes a rejected promise instead. */
export function rejectOnThrow<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (error) {
    return Promise.reject(error);
  }
}

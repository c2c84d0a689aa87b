/**
 * Shared append-side rules of the event logs (ours). {@link prepareEvents} runs before anything is written: `InvalidArgumentError` for a bad stream
 * id or envelope, `EventSchemaError` for data failing its zod schema or not being plain JSON (refused, never dropped); it keeps the schema's parsed
 * output and serializes `data` and `metadata` exactly once. {@link checkExpectedVersion} throws `ExpectedVersionConflictError`; {@link samePayload}
 * decides idempotency on stream, type, schema version, data and metadata (key order and `time` ignored). Data as JSON text is `log-json.ts`, the
 * row decoder `log-decode.ts`.
 */
import { uuidv7 } from "../../core/uuid-v7.ts";
import { EventSchemaError, ExpectedVersionConflictError, InvalidArgumentError } from "../../core/errors.ts";
import type { EventMetadata, ExpectedVersion, NewEvent, ReadAllOptions, ReadStreamOptions } from "../event-log.ts";
import type { EventRegistry } from "../events/registry.ts";
import { assertJson, describe, stringify, toJson } from "./log-json.ts";

/** An event checked and serialized for writing. */
export interface PreparedEvent {
  eventId: string;
  /** True if the caller supplied the eventId (only those can be duplicates). */
  callerEventId: boolean;
  type: string;
  schemaVersion: number;
  /** Caller-supplied ISO time, or undefined to use the commit time. */
  time: string | undefined;
  dataJson: string;
  /** What the log writes instead of `dataJson` when it encrypts the stream (`crypto/log-cipher.ts`); `dataJson` stays the plaintext. */
  storedDataJson?: string;
  /** The ciphertext of a sealed batch whose head this event is (`crypto/sealed-batch.ts`): the SQLite log stores it beside the event row. */
  sealedBlob?: Buffer;
  metadataJson: string;
  /** The validated data (returned in the append result; the log keeps only `dataJson`). */
  data: unknown;
  metadata: EventMetadata;
  /** False when the type is `process-crash-safe` (`events/registry.ts`): a commit of only such events need not be synced. */
  durable: boolean;
}

/** The stored columns of an event, as both logs keep them. */
export interface EventRecord {
  globalPosition: number;
  eventId: string;
  streamId: string;
  version: number;
  type: string;
  schemaVersion: number;
  time: string;
  dataJson: string;
  metadataJson: string;
}

const EMPTY_METADATA = "{}";

/** Throws `InvalidArgumentError` unless `streamId` is a non-empty string. */
export function checkStreamId(streamId: unknown): asserts streamId is string {
  if (typeof streamId !== "string" || streamId.length === 0) {
    throw new InvalidArgumentError(`streamId must be a non-empty string, got ${describe(streamId)}.`);
  }
}

/** Throws `InvalidArgumentError` unless `value` is undefined or an integer ≥ `min`. */
export function checkOptionalInteger(name: string, value: unknown, min: number): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got ${describe(value)}.`);
  }
}

/** Throws `InvalidArgumentError` for an expectedVersion that is none of the four modes. */
export function checkExpectedVersionArgument(expected: unknown): asserts expected is ExpectedVersion {
  if (expected === "any" || expected === "no_stream" || expected === "stream_exists") return;
  if (typeof expected === "number" && Number.isSafeInteger(expected) && expected >= 0) return;
  throw new InvalidArgumentError(
    `expectedVersion must be "any", "no_stream", "stream_exists" or an integer ≥ 0, got ${describe(expected)}.`,
  );
}

/**
 * Validates and serializes a batch. Throws `InvalidArgumentError` (bad envelope, an eventId twice in the batch) or `EventSchemaError` (schema
 * failure, unknown type, data that is not JSON); the message names the event's index and type.
 */
export function prepareEvents(registry: EventRegistry, streamId: string, events: readonly NewEvent[]): PreparedEvent[] {
  checkStreamId(streamId);
  if (!Array.isArray(events)) {
    throw new InvalidArgumentError(`events must be an array of new events, got ${describe(events)}.`);
  }
  const prepared: PreparedEvent[] = new Array(events.length);
  let seen: Set<string> | undefined;
  // Batches are usually one type: look its latest schema version up once.
  let latestType: string | undefined;
  let latestVersion: number | undefined;
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    if (typeof event !== "object" || event === null || typeof event.type !== "string") {
      throw new InvalidArgumentError(`events[${index}] must be an object with a string "type", got ${describe(event)}.`);
    }
    const { type } = event;
    if (event.schemaVersion === undefined && type !== latestType) {
      latestType = type;
      latestVersion = registry.latestVersion(type);
    }
    const schemaVersion = event.schemaVersion ?? latestVersion;
    if (schemaVersion === undefined) {
      throw new EventSchemaError(`events[${index}]: unknown event type "${type}": register its schema before appending it.`, {
        details: { index, type },
      });
    }
    // The caller's data, as given: a schema may strip unknown keys, and a non-JSON value there would vanish without a word.
    assertJson(event.data, index, type, "data");
    let data: unknown;
    try {
      data = registry.validate(type, schemaVersion, event.data);
    } catch (error) {
      if (EventSchemaError.isInstance(error)) {
        throw new EventSchemaError(`events[${index}]: ${error.message}`, { cause: error, details: { index, ...error.details } });
      }
      throw error;
    }
    const callerEventId = event.eventId !== undefined;
    if (callerEventId && (typeof event.eventId !== "string" || event.eventId.length === 0)) {
      throw new InvalidArgumentError(`events[${index}].eventId must be a non-empty string, got ${describe(event.eventId)}.`);
    }
    const eventId = callerEventId ? (event.eventId as string) : uuidv7();
    if (callerEventId) {
      seen ??= new Set();
      if (seen.has(eventId)) throw new InvalidArgumentError(`events[${index}].eventId "${eventId}" appears twice in one append.`);
      seen.add(eventId);
    }
    if (event.time !== undefined && (typeof event.time !== "string" || Number.isNaN(Date.parse(event.time)))) {
      throw new InvalidArgumentError(`events[${index}].time must be an ISO 8601 string, got ${describe(event.time)}.`);
    }
    if (event.metadata !== undefined && (typeof event.metadata !== "object" || event.metadata === null || Array.isArray(event.metadata))) {
      throw new InvalidArgumentError(`events[${index}].metadata must be an object, got ${describe(event.metadata)}.`);
    }
    prepared[index] = {
      eventId,
      callerEventId,
      type,
      schemaVersion,
      time: event.time,
      // A schema that only copies or narrows JSON input outputs JSON: the check above is enough.
      dataJson: registry.preservesJson?.(type, schemaVersion) === true ? stringify(data, index, type, "data") : toJson(data, index, type, "data"),
      metadataJson: event.metadata === undefined ? EMPTY_METADATA : toJson(event.metadata, index, type, "metadata"),
      data,
      metadata: event.metadata ?? {},
      durable: registry.durability?.(type) !== "process-crash-safe",
    };
  }
  return prepared;
}

/** Throws `ExpectedVersionConflictError` when `actual` does not satisfy `expected`. */
export function checkExpectedVersion(streamId: string, expected: ExpectedVersion, actual: number): void {
  const ok =
    expected === "any" ||
    (expected === "no_stream" && actual === 0) ||
    (expected === "stream_exists" && actual > 0) ||
    expected === actual;
  if (!ok) throw new ExpectedVersionConflictError(streamId, expected, actual);
}

/** True if a stored record carries the same payload as a prepared event (idempotent retry). */
export function samePayload(record: EventRecord, streamId: string, event: PreparedEvent): boolean {
  if (record.streamId !== streamId || record.type !== event.type || record.schemaVersion !== event.schemaVersion) return false;
  return jsonEqual(record.dataJson, event.dataJson) && jsonEqual(record.metadataJson, event.metadataJson);
}

function jsonEqual(left: string, right: string): boolean {
  if (left === right) return true;
  return canonical(JSON.parse(left)) === canonical(JSON.parse(right));
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Resolves a batch whose caller-supplied eventIds are already known. Returns the original records when the whole batch is a retry, undefined when no
 * eventId is known, and throws `EventIdReusedError` otherwise (a different payload, another stream, or a batch mixing known and new events).
 */
export function resolveDuplicates(
  streamId: string,
  events: readonly PreparedEvent[],
  lookup: (eventId: string) => EventRecord | undefined,
  reused: (message: string, details: Record<string, unknown>) => Error,
): EventRecord[] | undefined {
  let found: EventRecord[] | undefined;
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    const record = event.callerEventId ? lookup(event.eventId) : undefined;
    if (record === undefined) {
      if (found !== undefined) {
        throw reused(
          `events[${index}] is new but earlier events of the batch are already in the log: a retried append must repeat the original batch exactly.`,
          { streamId, index },
        );
      }
      continue;
    }
    if (!samePayload(record, streamId, event)) {
      throw reused(
        `eventId "${event.eventId}" is already in the log (stream "${record.streamId}", version ${record.version}, type "${record.type}") with a different payload.`,
        { eventId: event.eventId, streamId, existingStreamId: record.streamId, index },
      );
    }
    if (found !== undefined && record.version !== found[found.length - 1].version + 1) {
      throw reused(`events[${index}] ("${event.eventId}") is already in the log, but not in the order of the original append.`, {
        streamId,
        index,
      });
    }
    if (found === undefined) {
      if (index > 0) {
        throw reused(`events[${index}] ("${event.eventId}") is already in the log but events before it are new.`, { streamId, index });
      }
      found = [];
    }
    found.push(record);
  }
  return found;
}

/** Checks {@link ReadStreamOptions}; throws `InvalidArgumentError` naming the bad field. */
export function checkReadStreamOptions(options: ReadStreamOptions): void {
  checkOptionalInteger("readStream: fromVersion", options.fromVersion, 0);
  checkOptionalInteger("readStream: limit", options.limit, 0);
  if (options.direction !== undefined && options.direction !== "forwards" && options.direction !== "backwards") {
    throw new InvalidArgumentError(`readStream: direction must be "forwards" or "backwards", got ${describe(options.direction)}.`);
  }
}

/**
 * Refuses a `tenant` filter on a log without a tenant index (SQLite, memory).
 *
 * @throws InvalidArgumentError when `options.tenant` is set.
 */
export function refuseTenantFilter(what: string, options: { tenant?: string } | undefined): void {
  if (options?.tenant !== undefined) {
    throw new InvalidArgumentError(`${what}: this log has no tenant index (only the PostgreSQL log filters by tenant); filter by session.created.tenant, or use a tenant-scoped session repository.`);
  }
}

/** Checks {@link ReadAllOptions}; throws `InvalidArgumentError` naming the bad field. */
export function checkReadAllOptions(options: ReadAllOptions): void {
  checkOptionalInteger("readAll: fromPosition", options.fromPosition, 0);
  checkOptionalInteger("readAll: limit", options.limit, 0);
  if (options.types !== undefined && (!Array.isArray(options.types) || options.types.some((type) => typeof type !== "string"))) {
    throw new InvalidArgumentError("readAll: types must be an array of event type names.");
  }
}

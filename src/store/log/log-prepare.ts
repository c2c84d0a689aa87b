/**
 * Shared append-side rules of the event logs (ours). {@link prepareEvents} runs before anything is written: `InvalidArgumentError` for a bad stream
 * id or envelope, `EventSchemaError` for data failing its zod schema or not being plain JSON (refused, never dropped); it keeps the schema's parsed
 * output and serializes `data` and `metadata` exactly once. {@link checkExpectedVersion} throws `ExpectedVersionConflictError`; {@link samePayload}
 * decides idempotency on stream, type, schema version, data and metadata (key order and `time` ignored).
 */
import { uuidv7 } from "../../core/uuid-v7.ts";
import { DataKeyUnavailableError, EventCorruptError, EventSchemaError, ExpectedVersionConflictError, InvalidArgumentError, LogSchemaError } from "../../core/errors.ts";
import { EVENT_CATALOGUE } from "../events/catalogue.ts";
import type { EventMetadata, ExpectedVersion, NewEvent, ReadAllOptions, ReadStreamOptions, StoredEvent } from "../event-log.ts";
import type { EventRegistry } from "../events/registry.ts";
import { upcastStoredEvent } from "../events/upcast.ts";

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

/**
 * The first place in `value` that `JSON.stringify` would drop or change silently (a function, a symbol, a non-finite number, `undefined` in an array,
 * an object that is not plain such as a Date, Map or class instance), with what it is; undefined when `value` is JSON. An `undefined` object property
 * is allowed (it is an absent optional field). Cycles are left to `JSON.stringify`.
 */
function nonJsonAt(value: unknown, path: string, depth = 0): { path: string; what: string } | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : { path, what: `the number ${value}` };
  if (typeof value === "function") return { path, what: "a function" };
  if (typeof value === "symbol") return { path, what: "a symbol" };
  if (typeof value === "bigint") return { path, what: "a bigint" };
  if (value === undefined) return { path, what: "undefined" };
  if (depth > 200) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = nonJsonAt(value[index], `${path}[${index}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype !== Object.prototype && prototype !== null) {
    return { path, what: `a ${(value as object).constructor?.name ?? "non-plain object"} (not a plain object)` };
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item === undefined) continue;
    const found = nonJsonAt(item, /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * True when `value` holds nothing {@link nonJsonAt} would report: the same walk without building a path per key, so that the common case (JSON data)
 * costs one pass and no strings.
 */
function isPlainJson(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (depth > 200) return true;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) if (!isPlainJson(value[index], depth + 1)) return false;
    return true;
  }
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key in value as Record<string, unknown>) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined && !isPlainJson(item, depth + 1)) return false;
  }
  return true;
}

/** Refuses what JSON.stringify (or a schema stripping unknown keys) would drop or rewrite without a word. */
function assertJson(value: unknown, index: number, type: string, field: string): void {
  if (isPlainJson(value)) return;
  const bad = nonJsonAt(value, field);
  if (bad) {
    throw new EventSchemaError(
      `events[${index}] ("${type}"): ${bad.path} is ${bad.what}, which is not JSON; nothing was appended. Pass JSON values only (strings, finite numbers, booleans, null, arrays, plain objects).`,
      { details: { index, type, field, path: bad.path } },
    );
  }
}

function toJson(value: unknown, index: number, type: string, field: string): string {
  assertJson(value, index, type, field);
  return stringify(value, index, type, field);
}

/** `JSON.stringify` of a value already checked to be JSON; a cycle or a bigint is an `EventSchemaError`. */
function stringify(value: unknown, index: number, type: string, field: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new EventSchemaError(`events[${index}] ("${type}"): ${field} is not JSON-serializable: ${(error as Error).message}.`, {
      cause: error,
      details: { index, type, field },
    });
  }
  if (json === undefined) {
    throw new EventSchemaError(`events[${index}] ("${type}"): ${field} is not JSON (got ${describe(value)}).`, {
      details: { index, type, field },
    });
  }
  return json;
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

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "object") return value === null ? "null" : Array.isArray(value) ? "an array" : "an object";
  return `${typeof value} ${String(value)}`;
}

/**
 * Turns a stored record into the public event (fresh objects on every call), upcast to the current catalogue. A built-in event type stored with a
 * schema version newer than this code knows (written by a newer Arbor) is refused with `LogSchemaError` naming where it is: its data may mean
 * something this code would misread.
 */
export function toStoredEvent(record: EventRecord): StoredEvent {
  if (record.dataJson.startsWith(SEALED_PREFIX)) refuseSealed(record);
  const known = (EVENT_CATALOGUE as Record<string, { version: number } | undefined>)[record.type]?.version;
  if (known !== undefined && record.schemaVersion > known) {
    throw new LogSchemaError(
      `The stored event at stream "${record.streamId}" version ${record.version} (global position ${record.globalPosition}) is "${record.type}" schema version ${record.schemaVersion}, newer than this arbor-agent knows (${known}): it was written by a newer Arbor. Upgrade arbor-agent to read this log; nothing was changed.`,
      { details: { streamId: record.streamId, version: record.version, globalPosition: record.globalPosition, eventType: record.type, schemaVersion: record.schemaVersion, knownVersion: known } },
    );
  }
  return upcastStoredEvent({
    eventId: record.eventId,
    streamId: record.streamId,
    version: record.version,
    globalPosition: record.globalPosition,
    type: record.type,
    schemaVersion: record.schemaVersion,
    time: record.time,
    data: parseStored(record, "data", record.dataJson),
    metadata: parseStored(record, "metadata", record.metadataJson) as EventMetadata,
  });
}

/** How encrypted data starts (`crypto/sealed-record.ts`); a log with the key opens it before this point. */
const SEALED_PREFIX = '{"$enc":"';

function refuseSealed(record: EventRecord): never {
  throw new DataKeyUnavailableError(
    `The stored event at stream "${record.streamId}" version ${record.version} is encrypted, and this log was opened without encryption: open it with its master key (encryption: { key }) to read it.`,
    { details: { streamId: record.streamId, version: record.version, keyId: record.streamId, reason: "no_encryption" } },
  );
}

/** Parses one stored JSON column; corrupt JSON is an `EventCorruptError` naming where it is. */
function parseStored(record: EventRecord, field: "data" | "metadata", json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch (cause) {
    const where = `stream "${record.streamId}" version ${record.version} (global position ${record.globalPosition}, ${record.type})`;
    throw new EventCorruptError(`The stored event at ${where} has corrupt ${field} JSON: ${(cause as Error).message}.`, {
      cause,
      details: { streamId: record.streamId, version: record.version, globalPosition: record.globalPosition, eventType: record.type, field },
    });
  }
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

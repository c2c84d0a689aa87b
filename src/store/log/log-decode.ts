/**
 * The logs' one row decoder (ours): {@link toStoredEvent} turns a stored record into the public event, upcast to the current catalogue, with fresh
 * objects on every call. A record a newer Arbor wrote (a built-in type at a newer schema version) is `LogSchemaError`, sealed data read without
 * its key `DataKeyUnavailableError`, corrupt JSON `EventCorruptError`, each naming where the event is; nothing is changed.
 */
import { DataKeyUnavailableError, EventCorruptError, LogSchemaError } from "../../core/errors.ts";
import { EVENT_CATALOGUE } from "../events/catalogue.ts";
import type { EventMetadata, StoredEvent } from "../event-log.ts";
import { upcastStoredEvent } from "../events/upcast.ts";
import type { EventRecord } from "./log-prepare.ts";

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
export function parseStored(record: EventRecord, field: "data" | "metadata", json: string): unknown {
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

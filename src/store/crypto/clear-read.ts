/**
 * Reading a session stream without its data key (ours): each stored event with only what is in clear (ids, version, global position, type,
 * schema version, time, metadata, and of its data the clear fields `PLAIN_FIELDS` keeps beside the ciphertext, `session.created.tenant` among
 * them). This is what finishing a delete needs once the key is destroyed (a delete interrupted between destroying the key and removing the rows):
 * the tenant to check, and the counts, times and positions of the tombstone. Nothing is decrypted, so nothing is authenticated either: a clear
 * field read here is what the row says. Corrupt JSON is `EventCorruptError`, as in any read.
 */
import type { ClearEvent, EventMetadata } from "../event-log.ts";
import { parseStored } from "../log/log-decode.ts";
import type { EventRecord } from "../log/log-prepare.ts";
import { isSealedData } from "./sealed-record.ts";

/** The event of a stored record without opening its data (see the module contract). */
export function clearEventOf(record: EventRecord): ClearEvent {
  const { globalPosition, eventId, streamId, version, type, schemaVersion, time, dataJson, metadataJson } = record;
  const sealed = isSealedData(dataJson);
  const parsed = parseStored(record, "data", dataJson);
  const data: Record<string, unknown> = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : {};
  if (sealed) delete data.$enc;
  const metadata = parseStored(record, "metadata", metadataJson) as EventMetadata;
  return { eventId, streamId, version, globalPosition, type, schemaVersion, time, data, metadata, sealed };
}

/**
 * Sealed batches (ours): the durable events of one append to a session stream sealed with ONE AES-256-GCM operation instead of one each (a
 * `node:crypto` AEAD operation has a fixed cost of several µs, as much as a small event's whole plain append). Used by the SQLite log, whose
 * reads can look a row up synchronously; PostgreSQL seals one record per operation (`sealed-record.ts`).
 *
 * Stored `data` of each event (the clear fields, `PLAIN_FIELDS`, follow the first value as in a single record's envelope):
 * - the batch's head (its first event): `{"$enc":"*"<clear>}`, its ciphertext (format byte 2, IV, ciphertext, tag: raw bytes, no base64) in a row
 *   of its own beside the event (`arbor_sealed_batches`, by the head's global position; `sqlite-sealed-batches.ts`);
 * - every other member: `{"$enc":"~<how many versions after its head it is>"<clear>}` (the events of an append have consecutive versions).
 * A reader that knows only single records refuses both as corrupt: neither is a single record's base64.
 *
 * The plaintext is a header line, the JSON `[types, [[offset, type index, schemaVersion, clear], …]]` of the members (the head first, offset 0),
 * then each member's data JSON on its own line (serialized JSON holds no raw line break; an event whose does is sealed alone). The AAD is `arbor
 * batch\0<streamId>\0<head event id>`, so a batch's ciphertext moved to another stream or head does not authenticate; a member is bound to its
 * version by its offset from its head (a row moved to another version finds no head there, or a batch without it). Opening a member decrypts its
 * whole batch (at most {@link MAX_BATCH_BYTES} of plaintext, {@link MAX_BATCH_EVENTS} events) and checks the row's type, schema version and clear
 * fields against its entry: a moved, swapped or edited row is `EventCorruptError`, as is a member whose head (or its ciphertext) is gone. Opened
 * batches are kept in a small cache, so a range read decrypts each batch once.
 *
 * Only durable events are batched. `process-crash-safe` ones (`message.started`, `message.delta`) are sealed alone, because the delta retention
 * deletes or empties their rows, which must then take their ciphertext with them; no other write deletes or rewrites a single event row (a
 * session's delete removes every row of its stream and its batches' ciphertext).
 */
import { EventCorruptError } from "../../core/errors.ts";
import { seal } from "./aes-gcm.ts";
import { BATCH_HEAD_PREFIX, BATCH_MEMBER_PREFIX, clearFieldsOf, decryptBytes, sealData, type SealedEventIdentity } from "./sealed-record.ts";

/** The format byte of a batch's ciphertext (a single record's is 1). */
const BATCH_FORMAT = 2;
/** At most this many bytes of data JSON in one batch (what opening any one member decrypts). */
const MAX_BATCH_BYTES = 64 * 1024;
/** At most this many events in one batch. */
export const MAX_BATCH_EVENTS = 256;
/** Opened batches kept (per log). */
const CACHED_BATCHES = 64;

/** An event to seal. */
export interface BatchEvent {
  eventId: string;
  type: string;
  schemaVersion: number;
  dataJson: string;
  data: unknown;
  /** False for `process-crash-safe` events: sealed alone. */
  durable: boolean;
}

/** What to store for one event: its data column, and for a batch's head the batch's ciphertext. */
export interface SealedEvent {
  data: string;
  blob?: Buffer;
}

/** One header entry: versions after the head, index into the header's types, schema version, clear fields. */
type HeaderEntry = [number, number, number, string];

interface OpenedBatch {
  /** Offset → position in `entries` and `lines`. */
  index: Map<number, number>;
  types: string[];
  entries: HeaderEntry[];
  lines: string[];
}

const aadOf = (streamId: string, headId: string): Buffer => Buffer.from(`arbor batch\0${streamId}\0${headId}`, "utf8");

/**
 * What to store for each of `events` (same order), all of one append to `streamId`: the durable ones in batches (see the module contract), the
 * others, a batch of one and an event whose data JSON holds a line break sealed alone.
 */
export function sealEvents(key: Buffer, streamId: string, events: readonly BatchEvent[]): SealedEvent[] {
  const stored: SealedEvent[] = new Array(events.length);
  const alone = (event: BatchEvent): SealedEvent => ({
    data: sealData(key, { streamId, eventId: event.eventId, type: event.type, schemaVersion: event.schemaVersion }, event.dataJson, event.data),
  });
  let members: number[] = [];
  let bytes = 0;
  const close = (): void => {
    if (members.length === 1) stored[members[0]] = alone(events[members[0]]);
    else if (members.length > 1) sealBatch(key, streamId, events, members, stored);
    members = [];
    bytes = 0;
  };
  for (let index = 0; index < events.length; index++) {
    const event = events[index];
    if (!event.durable || event.dataJson.includes("\n")) {
      stored[index] = alone(event);
      continue;
    }
    if (members.length > 0 && (bytes + event.dataJson.length > MAX_BATCH_BYTES || members.length >= MAX_BATCH_EVENTS)) close();
    members.push(index);
    bytes += event.dataJson.length;
  }
  close();
  return stored;
}

function sealBatch(key: Buffer, streamId: string, events: readonly BatchEvent[], members: readonly number[], stored: SealedEvent[]): void {
  const types: string[] = [];
  const typeIndex = new Map<string, number>();
  const entries: HeaderEntry[] = [];
  const lines: string[] = [];
  for (const index of members) {
    const event = events[index];
    let type = typeIndex.get(event.type);
    if (type === undefined) typeIndex.set(event.type, (type = types.push(event.type) - 1));
    entries.push([index - members[0], type, event.schemaVersion, clearFieldsOf(event.type, event.data)]);
    lines.push(event.dataJson);
  }
  const head = events[members[0]];
  const blob = seal(key, aadOf(streamId, head.eventId), `${JSON.stringify([types, entries])}\n${lines.join("\n")}`, BATCH_FORMAT);
  stored[members[0]] = { data: `${BATCH_HEAD_PREFIX}"${entries[0][3]}}`, blob };
  for (let position = 1; position < members.length; position++) stored[members[position]] = { data: `${BATCH_MEMBER_PREFIX}${members[position] - members[0]}"${entries[position][3]}}` };
}

/** True when stored data is a batch's head or member (opened with {@link createBatchOpener}). */
export function isBatchSealed(stored: string): boolean {
  return stored.startsWith(BATCH_HEAD_PREFIX) || stored.startsWith(BATCH_MEMBER_PREFIX);
}

/** A batch head as its reader finds it: the head event's id and stored data, and the batch's ciphertext (undefined when its row is gone). */
export interface BatchHeadRow {
  eventId: string;
  data: string;
  sealed: Buffer | undefined;
}

/** Reads the head row at `version` of `streamId` with its batch's ciphertext, synchronously. */
export type BatchHeadReader = (streamId: string, version: number) => BatchHeadRow | undefined;

/** Opens batch members; `clear()` forgets every opened batch (a key was destroyed). */
export interface BatchOpener {
  /**
   * The data JSON of the event `identity` (at `identity.version`) whose stored data is `stored` (a head or a member); `headAt` reads its head.
   *
   * @throws EventCorruptError when the batch does not authenticate, its head is missing, or the row does not match its entry.
   */
  open(key: Buffer, identity: SealedEventIdentity & { version: number }, stored: string, headAt: BatchHeadReader): string;
  clear(): void;
}

/** A batch opener with its own cache of opened batches. */
export function createBatchOpener(): BatchOpener {
  const cache = new Map<string, OpenedBatch>();
  const corrupt = (identity: SealedEventIdentity, why: string): Error =>
    new EventCorruptError(
      `The encrypted data of the event "${identity.eventId}" (stream "${identity.streamId}", ${identity.type}) ${why}: it was altered, moved or lost. Nothing of it was read.`,
      { details: { streamId: identity.streamId, eventId: identity.eventId, eventType: identity.type, field: "data" } },
    );

  const openBatch = (key: Buffer, identity: SealedEventIdentity, head: BatchHeadRow): OpenedBatch => {
    if (!head.sealed) throw corrupt(identity, "belongs to a sealed batch whose ciphertext is not in the log");
    // The IV (random per batch) is in the first bytes: a key for the cache that a rewritten batch does not share.
    const cacheKey = `${identity.streamId}\0${head.eventId}\0${head.sealed.toString("hex", 0, 13)}`;
    const cached = cache.get(cacheKey);
    if (cached) {
      cache.delete(cacheKey);
      cache.set(cacheKey, cached);
      return cached;
    }
    const plain = decryptBytes(key, aadOf(identity.streamId, head.eventId), head.sealed, BATCH_FORMAT);
    if (plain === undefined) throw corrupt(identity, "does not authenticate with its session's data key (its batch)");
    const lines = plain.split("\n");
    let types: string[];
    let entries: HeaderEntry[];
    try {
      [types, entries] = JSON.parse(lines.shift()!) as [string[], HeaderEntry[]];
    } catch {
      throw corrupt(identity, "has a malformed batch");
    }
    if (!Array.isArray(types) || !Array.isArray(entries) || entries.length !== lines.length || entries[0]?.[0] !== 0) throw corrupt(identity, "has a malformed batch");
    const opened: OpenedBatch = { index: new Map(entries.map((entry, position) => [entry[0], position])), types, entries, lines };
    cache.set(cacheKey, opened);
    if (cache.size > CACHED_BATCHES) cache.delete(cache.keys().next().value!);
    return opened;
  };

  return {
    open(key, identity, stored, headAt) {
      let offset = 0;
      let prefix = BATCH_HEAD_PREFIX.length + 1;
      if (stored.startsWith(BATCH_MEMBER_PREFIX)) {
        const digits = /^([1-9][0-9]{0,8})"/.exec(stored.slice(BATCH_MEMBER_PREFIX.length));
        if (!digits) throw corrupt(identity, "has a malformed batch reference");
        offset = Number(digits[1]);
        prefix = BATCH_MEMBER_PREFIX.length + digits[0].length;
      } else if (stored[BATCH_HEAD_PREFIX.length] !== '"') {
        throw corrupt(identity, "has a malformed batch head");
      }
      if (!stored.endsWith("}")) throw corrupt(identity, "has a malformed batch reference");
      const clear = stored.slice(prefix, -1);
      const headVersion = identity.version - offset;
      const head = headVersion >= 1 ? headAt(identity.streamId, headVersion) : undefined;
      if (head === undefined || !head.data.startsWith(BATCH_HEAD_PREFIX)) throw corrupt(identity, `refers to the head of its sealed batch at version ${headVersion}, which is not in the log`);
      const batch = openBatch(key, identity, head);
      const position = batch.index.get(offset);
      const entry = position === undefined ? undefined : batch.entries[position];
      if (position === undefined || !entry || (offset === 0 && head.eventId !== identity.eventId) || batch.types[entry[1]] !== identity.type || entry[2] !== identity.schemaVersion || entry[3] !== clear) {
        throw corrupt(identity, "does not match its entry in its sealed batch");
      }
      return batch.lines[position];
    },
    clear: () => cache.clear(),
  };
}

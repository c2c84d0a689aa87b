/**
 * Sealed event data (ours): an event's `data` JSON encrypted with its session's data key (AES-256-GCM, `node:crypto`) in the same column, as
 * `{"$enc":"<base64: format byte, IV, ciphertext, tag>"}` plus the few fields SQL must see in clear ({@link PLAIN_FIELDS}). The AAD binds it to its
 * stream id, event id, type, schema version and the clear fields as written: a moved ciphertext or an edited clear field is `EventCorruptError`.
 * {@link sealText}/{@link openText} seal other strings of a session (`$enc:`, a purpose in the AAD); {@link sealBytes}/{@link openBytes} seal a
 * workspace blob's bytes (format byte 0x07, which no raw deflate stream starts with); {@link digestText} names a string without showing it (`$h:`,
 * HMAC-SHA256 under an HKDF subkey of the data key).
 */
import { createHmac, hkdfSync } from "node:crypto";
import { EventCorruptError } from "../../core/errors.ts";
import { open, seal } from "./aes-gcm.ts";

const FORMAT = 1;
/** How the stored `data` JSON of every sealed event starts ({@link isSealedData}). */
export const SEALED_PREFIX = '{"$enc":"';
const PREFIX = SEALED_PREFIX;
const TEXT_PREFIX = "$enc:";

/**
 * The fields of an event type's data that stay in clear beside the ciphertext (ids and the tenant, which SQL statements of the logs read); everything
 * else of an encrypted session's data is only in the ciphertext.
 */
export const PLAIN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "session.created": ["tenant"],
  "message.started": ["messageId"],
  "message.delta": ["messageId"],
};

/** What the AAD binds an event's data to. */
export interface SealedEventIdentity {
  streamId: string;
  eventId: string;
  type: string;
  schemaVersion: number;
}

/**
 * How a batch's head (`sealed-batch.ts`) and its other members start: the envelope's prefix and a character no base64 text holds, so that a reader
 * that knows only single records refuses them as corrupt instead of reading them as data.
 */
export const BATCH_HEAD_PREFIX = `${PREFIX}*`;
export const BATCH_MEMBER_PREFIX = `${PREFIX}~`;

/** True when a stored `data` JSON text is an envelope: a single record's ({@link sealData}) or a sealed batch's (`sealed-batch.ts`). */
export function isSealedData(json: string): boolean {
  return json.startsWith(PREFIX);
}

/** True when a stored `data` JSON text is an envelope written by {@link sealData} (one record, one AEAD operation). */
export function isSealedRecord(json: string): boolean {
  if (!json.startsWith(PREFIX)) return false;
  const mark = json[PREFIX.length];
  return mark !== "*" && mark !== "~";
}

/** True when a stored string was written by {@link sealText}. */
export function isSealedText(text: string): boolean {
  return text.startsWith(TEXT_PREFIX);
}

function aadOf(identity: SealedEventIdentity, clear: string): Buffer {
  return Buffer.from(`arbor event\0${identity.streamId}\0${identity.eventId}\0${identity.type}\0${identity.schemaVersion}\0${clear}`, "utf8");
}

/** AES-256-GCM over `plaintext` (`aes-gcm.ts` `seal`: format byte 1, IV, ciphertext, tag) as base64. */
function encrypt(key: Buffer, aad: Buffer, plaintext: string): string {
  return seal(key, aad, plaintext, FORMAT).toString("base64");
}

/** Decrypts what {@link encrypt} wrote. */
function decrypt(key: Buffer, aad: Buffer, base64: string): string | undefined {
  return decryptBytes(key, aad, Buffer.from(base64, "base64"), FORMAT);
}

/** Decrypts what `aes-gcm.ts` `seal` wrote with `format` (as UTF-8 text); undefined when the bytes are malformed or fail authentication. */
export function decryptBytes(key: Buffer, aad: Buffer, bytes: Buffer, format: number): string | undefined {
  // One UTF-8 decode of the whole output: update's "utf8" output goes through a StringDecoder, twice as slow on a context chunk.
  return open(key, aad, bytes, format)?.toString("utf8");
}

/** The clear part of an event's envelope: `,"field":value` for each of its type's {@link PLAIN_FIELDS} present in `data`, or "". */
export function clearFieldsOf(type: string, data: unknown): string {
  let clear = "";
  const fields = PLAIN_FIELDS[type];
  if (fields && typeof data === "object" && data !== null) {
    const record: Record<string, unknown> = { ...data };
    for (const field of fields) {
      const value = record[field];
      if (value !== undefined) clear += `,${JSON.stringify(field)}:${JSON.stringify(value)}`;
    }
  }
  return clear;
}

/** Seals an event's data JSON (`dataJson`, the serialized `data`) into its envelope. */
export function sealData(key: Buffer, identity: SealedEventIdentity, dataJson: string, data: unknown): string {
  const clear = clearFieldsOf(identity.type, data);
  return `${PREFIX}${encrypt(key, aadOf(identity, clear), dataJson)}"${clear}}`;
}

/**
 * Opens an envelope back into the data JSON text.
 *
 * @throws EventCorruptError when it does not authenticate (altered, moved, or another key).
 */
export function openData(key: Buffer, identity: SealedEventIdentity, stored: string): string {
  const end = stored.indexOf('"', PREFIX.length);
  const clear = end < 0 ? "" : stored.slice(end + 1, -1);
  const plain = end < 0 || !stored.endsWith("}") ? undefined : decrypt(key, aadOf(identity, clear), stored.slice(PREFIX.length, end));
  if (plain === undefined) {
    throw new EventCorruptError(
      `The encrypted data of the event "${identity.eventId}" (stream "${identity.streamId}", ${identity.type}) does not authenticate with its session's data key: it was altered or moved from another row. Nothing of it was read.`,
      { details: { streamId: identity.streamId, eventId: identity.eventId, eventType: identity.type, field: "data" } },
    );
  }
  return plain;
}

/** Seals a string of a session (`purpose` names what it is, e.g. `"head"`), as `$enc:<base64>`. */
export function sealText(key: Buffer, streamId: string, purpose: string, text: string): string {
  return TEXT_PREFIX + sealTextBytes(key, streamId, purpose, text).toString("base64");
}

/** Seals a string of a session as raw bytes (format byte 1, IV, ciphertext, tag) for a BLOB column; {@link openTextBytes} opens it. */
export function sealTextBytes(key: Buffer, streamId: string, purpose: string, text: string): Buffer {
  return seal(key, Buffer.from(`arbor ${purpose}\0${streamId}`, "utf8"), text, FORMAT);
}

/**
 * Opens bytes written by {@link sealTextBytes}.
 *
 * @throws EventCorruptError when they do not authenticate.
 */
export function openTextBytes(key: Buffer, streamId: string, purpose: string, sealed: Buffer): string {
  const plain = decryptBytes(key, Buffer.from(`arbor ${purpose}\0${streamId}`, "utf8"), sealed, FORMAT);
  if (plain === undefined) {
    throw new EventCorruptError(`The encrypted ${purpose} of stream "${streamId}" does not authenticate with its session's data key: it was altered or moved. Nothing of it was read.`, {
      details: { streamId, field: purpose },
    });
  }
  return plain;
}

/**
 * Opens a string written by {@link sealText}.
 *
 * @throws EventCorruptError when it does not authenticate.
 */
export function openText(key: Buffer, streamId: string, purpose: string, stored: string): string {
  return openTextBytes(key, streamId, purpose, Buffer.from(stored.slice(TEXT_PREFIX.length), "base64"));
}

/** HMAC subkeys, one per data key (derived, never the AES key itself). */
const digestKeys = new WeakMap<Buffer, Buffer>();

/** The keyed digest of a string of a session (`purpose` names what it is, e.g. `"memory key"`), as `$h:<base64url>`. */
export function digestText(key: Buffer, streamId: string, purpose: string, text: string): string {
  let subkey = digestKeys.get(key);
  if (!subkey) digestKeys.set(key, (subkey = Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), "arbor digest", 32))));
  return `$h:${createHmac("sha256", subkey).update(`${purpose}\0${streamId}\0${text}`, "utf8").digest("base64url")}`;
}

/** The first byte of {@link sealBytes}' output: BFINAL 1 with the reserved BTYPE 11, which starts no raw deflate stream. */
const BYTES_FORMAT = 0x07;

/** True when stored bytes were written by {@link sealBytes}. */
export function isSealedBytes(bytes: Buffer): boolean {
  return bytes.length > 0 && bytes[0] === BYTES_FORMAT;
}

/** Seals bytes (`purpose` is the AAD, e.g. the blob's tenant and name). */
export function sealBytes(key: Buffer, purpose: string, bytes: Buffer): Buffer {
  return seal(key, Buffer.from(`arbor ${purpose}`, "utf8"), bytes, BYTES_FORMAT);
}

/** Opens bytes written by {@link sealBytes}; undefined when they do not authenticate. */
export function openBytes(key: Buffer, purpose: string, sealed: Buffer): Buffer | undefined {
  return open(key, Buffer.from(`arbor ${purpose}`, "utf8"), sealed, BYTES_FORMAT);
}

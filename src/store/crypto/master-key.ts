/**
 * Master keys (ours; envelope encryption as a KMS does it): a {@link KeyProvider} wraps and unwraps the per-session data keys. `id` is stored beside
 * every wrapped key (older keys still read during a rotation); the context is the session id, so a key moved to another row does not unwrap, and a
 * wrong key or context throws `EncryptionKeyError`, never other bytes. Either call may return a promise (a KMS); the local provider is synchronous.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { EncryptionKeyError } from "../../core/errors.ts";

/** A value or a promise of it (a KMS answers asynchronously, a local key at once). */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Wraps and unwraps data keys: a local master key ({@link createLocalKeyProvider}) or a KMS.
 *
 * @example
 * ```ts
 * const kms: KeyProvider = {
 *   id: "kms:arn:aws:kms:eu-west-1:111:key/abc",
 *   wrap: async (dataKey, context) => Buffer.from((await kms.encrypt({ Plaintext: dataKey, EncryptionContext: { session: context } })).CiphertextBlob!),
 *   unwrap: async (wrapped, context) => Buffer.from((await kms.decrypt({ CiphertextBlob: wrapped, EncryptionContext: { session: context } })).Plaintext!),
 * };
 * ```
 */
export interface KeyProvider {
  /** A stable name of the master key (stored with each key it wrapped; at most 200 characters). */
  readonly id: string;
  /** Wraps a 32-byte data key for `context` (the session id). */
  wrap(dataKey: Buffer, context: string): MaybePromise<Buffer>;
  /** Unwraps; throws when the bytes were not wrapped by this key for `context`. */
  unwrap(wrapped: Buffer, context: string): MaybePromise<Buffer>;
}

const WRAP_FORMAT = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The 32 bytes of a master key given as a Buffer/Uint8Array, or as text: 64 hex digits or the base64 (or base64url) of 32 bytes.
 *
 * @throws EncryptionKeyError when it is not exactly 32 bytes.
 */
export function masterKeyBytes(key: Uint8Array | string): Buffer {
  let bytes: Buffer;
  if (typeof key === "string") {
    const text = key.trim();
    bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, /[-_]/.test(text) ? "base64url" : "base64");
  } else if (key instanceof Uint8Array) {
    bytes = Buffer.from(key);
  } else {
    throw new EncryptionKeyError("encryption.key must be 32 bytes (a Buffer or Uint8Array, 64 hex digits or base64).");
  }
  if (bytes.length !== 32) {
    throw new EncryptionKeyError(`encryption.key must be 32 bytes (AES-256), got ${bytes.length}: give 64 hex digits or the base64 of 32 random bytes (openssl rand -base64 32).`, {
      details: { bytes: bytes.length },
    });
  }
  return bytes;
}

/**
 * A master key held in this process: AES-256-GCM key wrap (random 96-bit IV, the context as additional authenticated data). Its `id` is `local:` and
 * 16 hex digits of a hash of the key (a fingerprint; the key cannot be derived from it).
 *
 * @throws EncryptionKeyError for a key that is not 32 bytes.
 * @example
 * ```ts
 * const provider = createLocalKeyProvider(process.env.ARBOR_ENCRYPTION_KEY!);
 * ```
 */
export function createLocalKeyProvider(key: Uint8Array | string): KeyProvider {
  const bytes = masterKeyBytes(key);
  const id = `local:${createHash("sha256").update("arbor master key id\0").update(bytes).digest("hex").slice(0, 16)}`;
  const aad = (context: string) => Buffer.from(`arbor data key\0${context}`, "utf8");
  return {
    id,
    wrap(dataKey, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", bytes, iv);
      cipher.setAAD(aad(context));
      const body = Buffer.concat([cipher.update(dataKey), cipher.final()]);
      return Buffer.concat([Buffer.of(WRAP_FORMAT), iv, body, cipher.getAuthTag()]);
    },
    unwrap(wrapped, context) {
      if (wrapped.length < 1 + IV_BYTES + TAG_BYTES || wrapped[0] !== WRAP_FORMAT) {
        throw new EncryptionKeyError(`The wrapped data key of "${context}" is not in the local key format.`, { details: { masterKeyId: id, keyId: context } });
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", bytes, wrapped.subarray(1, 1 + IV_BYTES));
        decipher.setAAD(aad(context));
        decipher.setAuthTag(wrapped.subarray(wrapped.length - TAG_BYTES));
        return Buffer.concat([decipher.update(wrapped.subarray(1 + IV_BYTES, wrapped.length - TAG_BYTES)), decipher.final()]);
      } catch (cause) {
        throw new EncryptionKeyError(`The master key ${id} does not unwrap the data key of "${context}": it is not the key that wrapped it (or the row was altered).`, {
          cause,
          details: { masterKeyId: id, keyId: context },
        });
      }
    },
  };
}

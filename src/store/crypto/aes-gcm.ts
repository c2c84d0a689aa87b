/**
 * AES-256-GCM over `node:crypto` (ours), the one primitive every sealed form uses: `format byte, 12-byte IV, ciphertext, 16-byte tag`.
 *
 * Per operation `node:crypto` costs several µs before the first byte: a cipher object, and a key prepared from the raw bytes. So this module
 * keeps a `KeyObject` per data key (a `WeakMap` on the key's `Buffer`: it lives exactly as long as the key does in the caller's cache), draws IVs
 * from one CSPRNG read per 1,024 operations, and writes its output in one allocation.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

export const IV_BYTES = 12;
export const TAG_BYTES = 16;

const keyObjects = new WeakMap<Buffer, KeyObject>();

/** The `KeyObject` of a raw 32-byte key, made once per key `Buffer`. */
function keyObjectOf(key: Buffer): KeyObject {
  let keyObject = keyObjects.get(key);
  if (keyObject === undefined) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return keyObject;
}

/** Random IVs drawn from one CSPRNG read per 1,024 operations (a `randomBytes` call per operation costs more than the cipher); never reused. */
let ivPool = Buffer.alloc(0);
let ivOffset = 0;
export function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_BYTES * 1024);
    ivOffset = 0;
  }
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}

/** Encrypts `plaintext` (a string is encoded as UTF-8) into `format, IV, ciphertext, tag`. */
export function seal(key: Buffer, aad: Buffer, plaintext: string | Buffer, format: number): Buffer {
  const iv = nextIv();
  const cipher = createCipheriv("aes-256-gcm", keyObjectOf(key), iv);
  cipher.setAAD(aad);
  const body = typeof plaintext === "string" ? cipher.update(plaintext, "utf8") : cipher.update(plaintext);
  cipher.final();
  const out = Buffer.allocUnsafe(1 + IV_BYTES + body.length + TAG_BYTES);
  out[0] = format;
  iv.copy(out, 1);
  body.copy(out, 1 + IV_BYTES);
  cipher.getAuthTag().copy(out, 1 + IV_BYTES + body.length);
  return out;
}

/** Decrypts what {@link seal} wrote with `format`; undefined when the bytes are malformed or fail authentication. */
export function open(key: Buffer, aad: Buffer, bytes: Buffer, format: number): Buffer | undefined {
  if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== format) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyObjectOf(key), bytes.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const plain = decipher.update(bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES));
    decipher.final();
    return plain;
  } catch {
    // Authentication failed: the caller names what it was opening.
    return undefined;
  }
}

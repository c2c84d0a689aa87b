/**
 * The CLI's encryption settings (ours; `docs/privacy.md`): `ARBOR_ENCRYPTION_KEY` (the master key, 64 hex digits or base64 of 32 bytes) turns
 * encryption at rest on for every command; `ARBOR_ENCRYPTION_PREVIOUS_KEYS` (comma-separated) adds the keys a rotation re-wraps from. A key that is
 * not 32 bytes is a `CliError` naming the variable, never echoing the key.
 */
import { EncryptionKeyError } from "../core/errors.ts";
import type { EncryptionOptions } from "../store/crypto/log-cipher.ts";
import { masterKeyBytes } from "../store/crypto/master-key.ts";
import { CliError } from "./cli-error.ts";

/** The `encryption` option of the environment's settings, or undefined when it sets no key. */
export function encryptionFromEnv(env: NodeJS.ProcessEnv): EncryptionOptions | undefined {
  const key = env.ARBOR_ENCRYPTION_KEY?.trim();
  if (!key) return undefined;
  const parse = (name: string, text: string): Buffer => {
    try {
      return masterKeyBytes(text);
    } catch (error) {
      if (EncryptionKeyError.isInstance(error)) throw new CliError(`${name} must be a 32-byte key: 64 hex digits or base64 (openssl rand -base64 32); ${error.message.replace(/^encryption\.key /, "it ")}`, 2);
      throw error;
    }
  };
  const previous = (env.ARBOR_ENCRYPTION_PREVIOUS_KEYS ?? "")
    .split(",")
    .map((text) => text.trim())
    .filter((text) => text.length > 0)
    .map((text) => parse("ARBOR_ENCRYPTION_PREVIOUS_KEYS", text));
  return { key: parse("ARBOR_ENCRYPTION_KEY", key), ...(previous.length > 0 ? { previousKeys: previous } : {}) };
}

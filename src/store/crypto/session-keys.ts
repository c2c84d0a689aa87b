/**
 * Per-session data keys (ours; envelope encryption): a random 256-bit key per session, wrapped by the master key in the key store
 * (`data-key-rows.ts`), cached once unwrapped. A session's streams share its key ({@link keyIdOfStream}); other streams have none; a tenant's
 * workspace blobs use {@link tenantBlobKeyId}, a key id no session may take. `load(id, true)` creates a missing key (the first stored row wins),
 * `load(id, false)` gives undefined for a destroyed one; an unknown or wrong master key is `EncryptionKeyError`. `destroy` makes every copy of the
 * session unreadable; `rotate()` re-wraps every row under the current master key.
 */
import { randomBytes } from "node:crypto";
import { EncryptionKeyError } from "../../core/errors.ts";
import { chain, type DataKeyRow, type DataKeyRows } from "./data-key-rows.ts";
import type { KeyProvider, MaybePromise } from "./master-key.ts";

const STREAM_PREFIXES = ["session-", "control-"] as const;
const CACHE_LIMIT = 10_000;

/** Key ids that are not a session's start with this character (a session id starting with it is refused on encrypted logs). */
export const RESERVED_KEY_ID_PREFIX = "\u0001";

/** The key id of a tenant's workspace blobs (`sealed-blob-rows.ts`). */
export function tenantBlobKeyId(tenant: string): string {
  return `${RESERVED_KEY_ID_PREFIX}workspace\u0001${tenant}`;
}

/** The key id (session id) of a stream, or undefined for a stream that is not encrypted. */
export function keyIdOfStream(streamId: string): string | undefined {
  for (const prefix of STREAM_PREFIXES) if (streamId.startsWith(prefix) && streamId.length > prefix.length) return streamId.slice(prefix.length);
  return undefined;
}

/** What {@link SessionKeys.rotate} did. */
export interface RotationResult {
  /** Data keys re-wrapped with the current master key. */
  rewrapped: number;
  /** Data keys in the store. */
  total: number;
  /** The current master key's id. */
  masterKeyId: string;
}

/** The key ring of one log (see the module contract). */
export interface SessionKeys {
  /** The cached key, if loaded. */
  cached(keyId: string): Buffer | undefined;
  load(keyId: string, create: boolean): MaybePromise<Buffer | undefined>;
  destroy(keyId: string): MaybePromise<boolean>;
  rotate(): Promise<RotationResult>;
  readonly masterKeyId: string;
}

/** The key ring over a key store. */
export function createSessionKeys(options: { provider: KeyProvider; previous: readonly KeyProvider[]; rows: DataKeyRows }): SessionKeys {
  const { provider, rows } = options;
  const providers = new Map<string, KeyProvider>([[provider.id, provider]]);
  for (const old of options.previous) if (!providers.has(old.id)) providers.set(old.id, old);
  const cache = new Map<string, Buffer>();
  const remember = (keyId: string, key: Buffer): Buffer => {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(keyId, key);
    return key;
  };

  const unwrapRow = (row: DataKeyRow): MaybePromise<Buffer> => {
    const owner = providers.get(row.masterKeyId);
    if (!owner) {
      throw new EncryptionKeyError(
        `The data key of session "${row.keyId}" was wrapped by master key ${row.masterKeyId}, which this log was not given (its key is ${provider.id}). Pass it in encryption.previousKeys (CLI: ARBOR_ENCRYPTION_PREVIOUS_KEYS) to read or rotate; a wrong key cannot read it.`,
        { details: { keyId: row.keyId, masterKeyId: row.masterKeyId } },
      );
    }
    const checked = (key: Buffer): Buffer => {
      if (!Buffer.isBuffer(key) || key.length !== 32) {
        throw new EncryptionKeyError(`The master key ${owner.id} unwrapped the data key of session "${row.keyId}" to ${Buffer.isBuffer(key) ? key.length : typeof key} bytes, not 32.`, {
          details: { keyId: row.keyId, masterKeyId: owner.id },
        });
      }
      return key;
    };
    try {
      const key = owner.unwrap(Buffer.from(row.wrapped), row.keyId);
      return key instanceof Promise ? key.then(checked, (error: unknown) => Promise.reject(asKeyError(error, row))) : checked(key);
    } catch (error) {
      throw asKeyError(error, row);
    }
  };

  const create = (keyId: string): MaybePromise<Buffer> => {
    const fresh = randomBytes(32);
    return chain(provider.wrap(fresh, keyId), (wrapped) =>
      chain(rows.insert({ keyId, masterKeyId: provider.id, wrapped: Buffer.from(wrapped) }), (stored) =>
        Buffer.from(stored.wrapped).equals(Buffer.from(wrapped)) ? fresh : unwrapRow(stored),
      ),
    );
  };

  return {
    masterKeyId: provider.id,
    cached: (keyId) => cache.get(keyId),
    load(keyId, createMissing) {
      const hit = cache.get(keyId);
      if (hit) return hit;
      return chain(rows.get(keyId), (row): MaybePromise<Buffer | undefined> => {
        if (row) return chain(unwrapRow(row), (key) => remember(keyId, key));
        if (!createMissing) return undefined;
        return chain(create(keyId), (key) => remember(keyId, key));
      });
    },
    destroy(keyId) {
      cache.delete(keyId);
      return rows.destroy(keyId);
    },
    async rotate() {
      const all = await rows.list();
      let rewrapped = 0;
      for (const entry of all) {
        if (entry.masterKeyId === provider.id) continue;
        const row = await rows.get(entry.keyId);
        if (!row || row.masterKeyId === provider.id) continue;
        const key = await unwrapRow(row);
        const wrapped = Buffer.from(await provider.wrap(key, row.keyId));
        if (await rows.rewrap({ keyId: row.keyId, masterKeyId: provider.id, wrapped }, row.masterKeyId)) rewrapped += 1;
      }
      if (rewrapped > 0) await rows.compact();
      return { rewrapped, total: all.length, masterKeyId: provider.id };
    },
  };
}

function asKeyError(error: unknown, row: DataKeyRow): Error {
  if (EncryptionKeyError.isInstance(error)) return error;
  return new EncryptionKeyError(`The master key ${row.masterKeyId} could not unwrap the data key of session "${row.keyId}": ${(error as Error)?.message ?? String(error)}.`, {
    cause: error,
    details: { keyId: row.keyId, masterKeyId: row.masterKeyId },
  });
}

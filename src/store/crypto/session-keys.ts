/**
 * Per-session data keys (ours; envelope encryption): a random 256-bit key per session, wrapped by the master key in the key store
 * (`data-key-rows.ts`), cached once unwrapped. A session's streams share its key ({@link keyIdOfStream}); other streams have none; a tenant's
 * workspace blobs use {@link tenantBlobKeyId}, a key id no session may take. `load(id, true)` creates a missing key (the first stored row wins),
 * `load(id, false)` gives undefined for a destroyed one; an unknown or wrong master key is `EncryptionKeyError`. `destroy` makes every copy of the
 * session unreadable; `rotate()` re-wraps every row under the current master key.
 *
 * The key check: the row {@link KEY_CHECK_ID} holds a constant wrapped by the master key, written just before the store's first key, which creates
 * the store (or, in a store written before the check existed, at its first writable open whose keys unwrap one of its data keys, under that data
 * key's master key). `verify()` (run before any key is loaded, created or destroyed) unwraps it: another master key is `EncryptionKeyMismatchError`,
 * and then nothing is read or written, so a store never holds keys wrapped by two master keys (other than during a rotation, whose old key comes in
 * `previous`). A rotation re-wraps it like any row. While the key store does not exist, `verify()` passes and writes nothing (nothing is sealed, so
 * any key reads the log; a log is bound to a master key by its first sealed write, not by an open), and a sealed record's key is
 * `EncryptionKeyError` naming the missing key store; so is a key created or a `rotate()` while the log holds sealed data (`holdsSealedData`).
 */
import { createHash, randomBytes } from "node:crypto";
import { DataKeyUnavailableError, EncryptionKeyError, EncryptionKeyMismatchError } from "../../core/errors.ts";
import { chain, type DataKeyRow, type DataKeyRows } from "./data-key-rows.ts";
import type { KeyProvider, MaybePromise } from "./master-key.ts";

const STREAM_PREFIXES = ["session-", "control-", "elicitation-"] as const;
const CACHE_LIMIT = 10_000;

/** Key ids that are not a session's start with this character (a session id starting with it is refused on encrypted logs). */
export const RESERVED_KEY_ID_PREFIX = "\u0001";

/** The key id of the key check row (see the module contract). */
export const KEY_CHECK_ID = `${RESERVED_KEY_ID_PREFIX}key check`;
/** The constant the key check row wraps. */
const KEY_CHECK_VALUE = createHash("sha256").update("arbor master key check").digest();

/** The key id of a tenant's workspace blobs (`sealed-blob-rows.ts`). */
export function tenantBlobKeyId(tenant: string): string {
  return `${RESERVED_KEY_ID_PREFIX}workspace\u0001${tenant}`;
}

/** The streams whose data key is `keyId` (a session's own, control and elicitation streams). */
export function streamsOfKey(keyId: string): string[] {
  return STREAM_PREFIXES.map((prefix) => `${prefix}${keyId}`);
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
  /** Data keys in the store (the key check row is not one). */
  total: number;
  /** The current master key's id. */
  masterKeyId: string;
}

/** The key ring of one log (see the module contract). */
export interface SessionKeys {
  /** The cached key, if loaded. */
  cached(keyId: string): Buffer | undefined;
  /** Drops a cached key, so the next `load` reads the store again (another process may have destroyed it, and a new session made a new one). */
  forget(keyId: string): void;
  load(keyId: string, create: boolean): MaybePromise<Buffer | undefined>;
  destroy(keyId: string): MaybePromise<boolean>;
  rotate(): Promise<RotationResult>;
  /** Checks, once, that the store's key check opens with the given keys (writing it when missing and writable); `EncryptionKeyMismatchError` else. */
  verify(): MaybePromise<void>;
  readonly masterKeyId: string;
}

/** An unwrap of a stored row, as the key check sees it. */
type Unwrapped = { ok: true } | { ok: false; error?: unknown };

/** The key ring over a key store. */
export function createSessionKeys(options: {
  provider: KeyProvider;
  previous: readonly KeyProvider[];
  rows: DataKeyRows;
  readOnly: boolean;
  log: string;
  /** True when the log (or, given a session's key id, its streams: {@link streamsOfKey}) holds sealed data: what is missing then was lost. */
  holdsSealedData?: (keyId?: string) => MaybePromise<boolean>;
}): SessionKeys {
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
    return chain(bind(), () =>
      chain(provider.wrap(fresh, keyId), (wrapped) =>
        chain(rows.insert({ keyId, masterKeyId: provider.id, wrapped: Buffer.from(wrapped) }), (stored) =>
          Buffer.from(stored.wrapped).equals(Buffer.from(wrapped)) ? fresh : unwrapRow(stored),
        ),
      ),
    );
  };

  /** Unwraps `row` with the key that wrapped it, when given: the check constant (`constant`) or any 32-byte key. */
  const tryUnwrap = (row: DataKeyRow, constant: boolean): MaybePromise<Unwrapped> => {
    const owner = providers.get(row.masterKeyId);
    if (!owner) return { ok: false };
    const judge = (bytes: Buffer): Unwrapped => ({ ok: Buffer.isBuffer(bytes) && (constant ? bytes.equals(KEY_CHECK_VALUE) : bytes.length === 32) });
    const failed = (error: unknown): Unwrapped => ({ ok: false, error });
    try {
      const value = owner.unwrap(Buffer.from(row.wrapped), row.keyId);
      return value instanceof Promise ? value.then(judge, failed) : judge(value);
    } catch (error) {
      return failed(error);
    }
  };
  const given = [...providers.keys()].join(", ");
  const mismatch = (row: DataKeyRow | { masterKeyId: string }, error?: unknown): Error => {
    const why =
      row.masterKeyId === provider.id || providers.has(row.masterKeyId)
        ? `the key given as ${row.masterKeyId} does not unwrap its key store's rows${error instanceof Error ? ` (${error.message})` : ""}`
        : `its key store ${rows.name} is under master key ${row.masterKeyId}, and this log was given ${given}`;
    return new EncryptionKeyMismatchError(
      `The encrypted log ${options.log} was written with another master key: ${why}. Open it with the key it was written with (to rotate, give the new key as the key and the old one in encryption.previousKeys; CLI: ARBOR_ENCRYPTION_KEY and ARBOR_ENCRYPTION_PREVIOUS_KEYS). Nothing was read or written.`,
      { ...(error !== undefined ? { cause: error } : {}), details: { log: options.log, keyStore: rows.name, masterKeyId: provider.id, storedMasterKeyId: row.masterKeyId } },
    );
  };
  const expectOpens = (row: DataKeyRow, constant: boolean): MaybePromise<void> =>
    chain(tryUnwrap(row, constant), (result) => {
      if (!result.ok) throw mismatch(row, result.error);
    });
  /** Writes the key check under `owner` (the key the store's data keys are under); another process's check, stored first, must open too. */
  const writeCheck = (owner: KeyProvider): MaybePromise<void> =>
    chain(owner.wrap(KEY_CHECK_VALUE, KEY_CHECK_ID), (wrapped) =>
      chain(rows.insert({ keyId: KEY_CHECK_ID, masterKeyId: owner.id, wrapped: Buffer.from(wrapped) }), (stored) =>
        Buffer.from(stored.wrapped).equals(Buffer.from(wrapped)) ? undefined : expectOpens(stored, true),
      ),
    );
  /** True while `verify()` found no key store: the first key created writes the key check first (and so creates the store). */
  let unbound = false;
  const check = (): MaybePromise<void> =>
    chain(rows.exists(), (exists) => {
      if (!exists) {
        unbound = true;
        return;
      }
      return checkStore();
    });
  const checkStore = (): MaybePromise<void> =>
    chain(rows.get(KEY_CHECK_ID), (row) => {
      if (row) return expectOpens(row, true);
      // A new store, or one written before the key check: one of its data keys must open with the keys given.
      return chain(rows.list(), (all) => {
        const stored = all.filter((entry) => entry.keyId !== KEY_CHECK_ID);
        const witness = stored.find((entry) => providers.has(entry.masterKeyId));
        if (stored.length > 0 && !witness) throw mismatch(stored[0]);
        const proven = witness ? chain(rows.get(witness.keyId), (found) => (found ? expectOpens(found, false) : undefined)) : undefined;
        // Under the key of the data key that proved it (a store opened mid-rotation stays under its old key until `rotate()` re-wraps the check).
        return chain(proven, () => (options.readOnly ? undefined : writeCheck(witness ? providers.get(witness.masterKeyId)! : provider)));
      });
    });
  let verified = false;
  let refused: unknown;
  let checking: Promise<void> | undefined;
  const verify = (): MaybePromise<void> => {
    if (verified) return;
    if (refused !== undefined) throw refused;
    if (checking) return checking;
    // A mismatch is final; another failure (the database unreachable) is tried again by the next call.
    const settle = (error: unknown): never => {
      if (EncryptionKeyMismatchError.isInstance(error)) refused = error;
      checking = undefined;
      throw error;
    };
    let result: MaybePromise<void>;
    try {
      result = check();
    } catch (error) {
      return settle(error);
    }
    if (!(result instanceof Promise)) {
      verified = true;
      return;
    }
    checking = result.then(() => void (verified = true), settle);
    return checking;
  };
  /**
   * Writes the key check of a store `verify()` found missing, before its first key: the store is created under this master key, or, when another
   * process created it meanwhile, its check must open with this one (else `EncryptionKeyMismatchError`, final, and nothing is written).
   */
  const bind = (): MaybePromise<void> => {
    if (!unbound) return;
    // Another process may have created the store since (then its key check decides); while it is still missing, sealed data means it was lost.
    const lost = chain(rows.exists(), (exists) => (exists ? false : (options.holdsSealedData?.() ?? false)));
    return chain(lost, (sealed) => {
      if (sealed) throw lostStore();
      return bindStore();
    });
  };
  /** The refusal of a key store that does not exist while the log holds sealed data (it was lost or moved away). */
  const lostStore = (): Error =>
    new EncryptionKeyError(
      `The key store ${rows.name} of the encrypted log ${options.log} does not exist, but the log holds sealed data: its key store was lost or moved, and a new one would make that data unreadable. Restore the key store from where it was kept (SQLite: the key file beside the log, e.g. arbor.keys.db for arbor.db; PostgreSQL: the key table's schema, by default the log's schema + _keys). Nothing was written.`,
      { details: { keyStore: rows.name, log: options.log } },
    );
  const bindStore = (): MaybePromise<void> => {
    const settle = (error: unknown): never => {
      if (EncryptionKeyMismatchError.isInstance(error)) {
        refused = error;
        verified = false;
      }
      throw error;
    };
    try {
      const written = writeCheck(provider);
      if (!(written instanceof Promise)) {
        unbound = false;
        return;
      }
      return written.then(() => void (unbound = false), settle);
    } catch (error) {
      return settle(error);
    }
  };
  const destroyedInUse = (keyId: string) =>
    new DataKeyUnavailableError(
      `The data key of session "${keyId}" is destroyed, but its streams still hold data sealed with it (a delete that stopped midway): a new key would make that data unreadable. Nothing was written; finish the delete (arbor rm, repository.delete) first.`,
      { details: { keyId, reason: "destroyed" } },
    );
  /** No row for `keyId`: a destroyed key (undefined), or, while the key store does not exist, `EncryptionKeyError` naming it. */
  const missing = (keyId: string): MaybePromise<undefined> =>
    chain(rows.exists(), (exists) => {
      if (exists) return undefined;
      const whose = keyId.startsWith(RESERVED_KEY_ID_PREFIX) ? "a key that is not a session's" : `the key of session "${keyId}"`;
      throw new EncryptionKeyError(
        `The key store ${rows.name} of the encrypted log ${options.log} does not exist, and the log holds data sealed with ${whose}: without its key store nothing sealed can be read. Restore the key store from where it was kept (SQLite: the key file beside the log, e.g. arbor.keys.db for arbor.db).`,
        { details: { keyId, keyStore: rows.name, log: options.log } },
      );
    });

  return {
    masterKeyId: provider.id,
    verify,
    cached: (keyId) => cache.get(keyId),
    forget: (keyId) => void cache.delete(keyId),
    load(keyId, createMissing) {
      const hit = cache.get(keyId);
      if (hit) return hit;
      return chain(verify(), () =>
        chain(rows.get(keyId), (row): MaybePromise<Buffer | undefined> => {
          if (row) return chain(unwrapRow(row), (key) => remember(keyId, key));
          if (!createMissing) return missing(keyId);
          // Streams still sealed with a destroyed key (a delete stopped midway): a new key would leave them neither readable nor deletable.
          const inUse = keyId.startsWith(RESERVED_KEY_ID_PREFIX) ? false : (options.holdsSealedData?.(keyId) ?? false);
          return chain(inUse, (held) => {
            if (held) throw destroyedInUse(keyId);
            return chain(create(keyId), (key) => remember(keyId, key));
          });
        }),
      );
    },
    destroy(keyId) {
      cache.delete(keyId);
      return chain(verify(), () => rows.destroy(keyId));
    },
    async rotate() {
      await verify();
      // No key store: nothing to re-wrap, unless the log holds sealed data (then its key store was lost, and "0 of 0" would hide it).
      if (unbound && !(await rows.exists()) && (await options.holdsSealedData?.()) === true) throw lostStore();
      const all = await rows.list();
      let rewrapped = 0;
      let rewritten = 0;
      // The key check last: a rotation stopped midway (a crash) leaves it under the old key, so the new key alone stays refused at open (some
      // data keys are still under the old one) until a rotation with both keys finishes.
      const ordered = [...all.filter((entry) => entry.keyId !== KEY_CHECK_ID), ...all.filter((entry) => entry.keyId === KEY_CHECK_ID)];
      for (const entry of ordered) {
        if (entry.masterKeyId === provider.id) continue;
        const row = await rows.get(entry.keyId);
        if (!row || row.masterKeyId === provider.id) continue;
        const key = await unwrapRow(row);
        const wrapped = Buffer.from(await provider.wrap(key, row.keyId));
        if (!(await rows.rewrap({ keyId: row.keyId, masterKeyId: provider.id, wrapped }, row.masterKeyId))) continue;
        rewritten += 1;
        if (row.keyId !== KEY_CHECK_ID) rewrapped += 1;
      }
      if (rewritten > 0) await rows.compact();
      return { rewrapped, total: all.filter((entry) => entry.keyId !== KEY_CHECK_ID).length, masterKeyId: provider.id };
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

/**
 * The event logs' encryption (ours; crypto-shredding): what `encryption` turns on, and the one object the logs call to seal and open.
 * - a session's streams (`session-<id>`, `control-<id>`, `elicitation-<id>`) are sealed with its data key (`session-keys.ts`, `sealed-record.ts`), others written in
 *   clear; ids, positions, type, time, metadata, the tenant and a few `PLAIN_FIELDS` stay in clear;
 * - the prompt of a queued task (`task.queued.input` on its task stream) is sealed with the data key of the task's session, so a session's delete
 *   shreds its background and scheduled prompts too; once that key is destroyed, the task reads with {@link SHREDDED_PROMPT} as its input;
 * - `seal` sets `storedDataJson`, keeping `dataJson` as the plaintext idempotent retries compare; `open` is synchronous (asynchronous reads call
 *   `prepareRead` first); a destroyed key is `DataKeyUnavailableError` (`reason: "destroyed"`);
 * - `inOrder` keeps call order across streams; `destroy` destroys the session's key BEFORE its rows are deleted, so a failed delete leaves
 *   unreadable rows, never a readable deleted session;
 * - `verify` checks the master key against the key store's key check (`session-keys.ts`): the logs call it at open, and every key operation and
 *   write waits for it, so a wrong key is `EncryptionKeyMismatchError` before anything is read or written.
 */
import { DataKeyUnavailableError, EncryptionKeyError, EventCorruptError, InvalidArgumentError, WorkspaceBlobError } from "../../core/errors.ts";
import type { ClearEvent } from "../event-log.ts";
import type { EventRecord, PreparedEvent } from "../log/log-prepare.ts";
import type { DataKeyRows } from "./data-key-rows.ts";
import { createLocalKeyProvider, type KeyProvider, type MaybePromise } from "./master-key.ts";
import { chain } from "./data-key-rows.ts";
import { digestText, isSealedBytes, isSealedData, isSealedRecord, isSealedText, openBytes, openData, openText, openTextBytes, sealBytes, sealData, sealText, sealTextBytes } from "./sealed-record.ts";
import { createBatchOpener, isBatchSealed, sealEvents, type BatchHeadReader } from "./sealed-batch.ts";
import { createSessionKeys, keyIdOfStream, RESERVED_KEY_ID_PREFIX, tenantBlobKeyId, type RotationResult } from "./session-keys.ts";
import { ignored, ignoreError } from "../../core/ignored.ts";

/**
 * Encryption at rest of a log (opt-in): each session's content sealed with its own data key, AES-256-GCM; the data keys wrapped by the master key
 * (`key`, or a KMS `provider`) and kept apart from the log (`docs/privacy.md`). Deleting a session destroys its key.
 *
 * @example
 * ```ts
 * const log = createSqliteEventLog({ path: "arbor.db", encryption: { key: process.env.ARBOR_ENCRYPTION_KEY! } });
 * ```
 */
export interface EncryptionOptions {
  /** The master key: 32 bytes (Buffer/Uint8Array), 64 hex digits or base64. Give this or `provider`. */
  key?: Uint8Array | string;
  /** A KMS (or any) key provider that wraps and unwraps data keys. Give this or `key`. */
  provider?: KeyProvider;
  /** Master keys that wrapped existing data keys before a rotation; read until `rotate()` re-wraps them. */
  previousKeys?: readonly (Uint8Array | string | KeyProvider)[];
  /** SQLite: the key file (default beside the log: `arbor.db` → `arbor.keys.db`). */
  keyFile?: string;
  /** PostgreSQL: the schema of the key table (default `<log schema>_keys`). */
  keySchema?: string;
}

/**
 * The admin face of an encrypted log: `log.encryption`.
 *
 * @example
 * ```ts
 * const { rewrapped } = await log.encryption!.rotate();
 * ```
 */
export interface LogEncryption {
  /** The current master key's id (`local:<fingerprint>` for a local key). */
  readonly masterKeyId: string;
  /** Re-wraps every data key not wrapped by the current master key (see `session-keys.ts`). */
  rotate(): Promise<RotationResult>;
  /**
   * The events of `streamId` read WITHOUT its data key, forwards: sealed data holds only its clear fields (`session.created.tenant`, the
   * `messageId` of message events; `clear-read.ts`), and nothing is decrypted or authenticated. For a session whose key is destroyed while its rows
   * remain (a delete interrupted after destroying the key): `repository.delete` finishes such a delete with it.
   */
  readClear(streamId: string): Promise<ClearEvent[]>;
}

/** What the logs call (see the module contract). */
export interface LogCipher extends Omit<LogEncryption, "readClear"> {
  /** Runs `run` once the keys `events` of `streamId` are sealed with are loaded (created when missing), in call order. */
  inOrder(streamId: string, events: readonly PreparedEvent[], run: () => void): MaybePromise<void>;
  seal(streamId: string, events: PreparedEvent[]): PreparedEvent[];
  prepareRead(records: readonly EventRecord[]): MaybePromise<void>;
  open(record: EventRecord): EventRecord;
  /**
   * Seals the durable events of each append in batches (`sealed-batch.ts`) from now on, and opens batch members by reading their head's row with
   * `headAt` (synchronously). Without it every event is sealed alone and a batch member does not open.
   */
  sealInBatches(headAt: BatchHeadReader): void;
  sealText(streamId: string, purpose: string, text: string): string;
  /** {@link LogCipher.sealText} as raw bytes, for a BLOB column (the text itself for a stream that is not sealed). */
  sealTextBytes(streamId: string, purpose: string, text: string): string | Buffer;
  /** Opens what `sealText` or `sealTextBytes` wrote (text in clear as it is). */
  openText(streamId: string, purpose: string, text: string | Buffer): string;
  /** Seals a workspace blob's stored bytes with its tenant's workspace key (created on first use). */
  sealBlob(tenant: string, hash: string, data: Buffer): MaybePromise<Buffer>;
  /** Opens bytes {@link sealBlob} wrote (others, stored before encryption was on, as they are); `WorkspaceBlobError` when they do not authenticate. */
  openBlob(tenant: string, hash: string, data: Buffer): MaybePromise<Buffer>;
  /** A keyed digest of `text` for a session stream (`sealed-record.ts` `digestText`); the text itself for other streams. */
  digest(streamId: string, purpose: string, text: string): string;
  /** True when the stream is sealed (a session's stream). */
  encrypts(streamId: string): boolean;
  /** Loads (creating when missing) the key of a session stream. */
  ready(streamId: string): MaybePromise<void>;
  /** The key check (`session-keys.ts`), once: `EncryptionKeyMismatchError` for a key the log was not written with. */
  verify(): MaybePromise<void>;
  destroy(streamId: string): MaybePromise<void>;
  close(): MaybePromise<void>;
}

/**
 * The master key provider of `options`.
 *
 * @throws InvalidArgumentError for neither or both of `key` and `provider`; EncryptionKeyError for a key that is not 32 bytes.
 */
export function encryptionProvider(options: EncryptionOptions): KeyProvider {
  if (typeof options !== "object" || options === null) throw new InvalidArgumentError("encryption must be an object: { key } or { provider }.");
  if ((options.key === undefined) === (options.provider === undefined)) {
    throw new InvalidArgumentError("encryption needs exactly one of key (a 32-byte master key) and provider (a key provider for a KMS).");
  }
  return options.provider ? checkedProvider(options.provider) : createLocalKeyProvider(options.key!);
}

function checkedProvider(provider: KeyProvider): KeyProvider {
  if (typeof provider?.wrap !== "function" || typeof provider.unwrap !== "function" || typeof provider.id !== "string" || provider.id.length === 0 || provider.id.length > 200) {
    throw new InvalidArgumentError("encryption.provider must be { id: string (1-200 characters), wrap(dataKey, context), unwrap(wrapped, context) }.");
  }
  return provider;
}

/** The input a queued task reads with once its session's key is destroyed (its session was deleted): the prompt itself is gone. */
export const SHREDDED_PROMPT = "[shredded: this task's session was deleted, and its prompt with it]";

/** What marks a sealed prompt in a stored `task.queued` (an object, which no valid `input` is). */
const SEALED_PROMPT_MARK = '"input":{"$enc":';

/** The fields of an event's data (none when it is not an object). */
const fieldsOf = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null ? { ...value } : {});

/** The session whose key seals the prompt of an event of a stream that is not a session's (a `task.queued`), if any. */
function promptSessionOf(streamId: string, type: string, data: unknown): string | undefined {
  if (type !== "task.queued" || keyIdOfStream(streamId) !== undefined) return undefined;
  const { sessionId } = fieldsOf(data);
  return typeof sessionId === "string" && sessionId.length > 0 ? sessionId : undefined;
}

/** The stored `task.queued` data of a record whose prompt is sealed, or undefined. */
function sealedPromptOf(record: EventRecord): { data: Record<string, unknown> & { input: { $enc: string } }; sessionId: string } | undefined {
  if (record.type !== "task.queued" || !record.dataJson.includes(SEALED_PROMPT_MARK)) return undefined;
  const data = JSON.parse(record.dataJson) as Record<string, unknown> & { input: { $enc: string } };
  const sessionId = promptSessionOf(record.streamId, record.type, data);
  if (sessionId === undefined || typeof data.input?.$enc !== "string") {
    throw new EventCorruptError(`The task event "${record.eventId}" (stream "${record.streamId}") holds a sealed prompt without a session to open it with.`, {
      details: { streamId: record.streamId, eventId: record.eventId, eventType: record.type, field: "input" },
    });
  }
  return { data, sessionId };
}

/** The AAD purpose of a task's sealed prompt: bound to the event and its session. */
const promptPurpose = (eventId: string, sessionId: string): string => `task prompt\0${eventId}\0${sessionId}`;

/** The cipher of one log (`where.log` names it in errors) over its key store; `where.readOnly` writes no key check. */
export function createLogCipher(options: EncryptionOptions, rows: DataKeyRows, where: { log: string; readOnly: boolean; holdsSealedData?: (keyId?: string) => MaybePromise<boolean> }): LogCipher {
  const provider = encryptionProvider(options);
  const previous = (options.previousKeys ?? []).map((old) => (typeof old === "string" || old instanceof Uint8Array ? createLocalKeyProvider(old) : checkedProvider(old)));
  const keys = createSessionKeys({ provider, previous, rows, ...where });
  let tail: Promise<unknown> | undefined;
  let waiting = 0;
  /** Key ids `prepareRead` found no key for (destroyed), so that the synchronous `open` says so. */
  const absent = new Set<string>();
  /** Set by `sealInBatches`: reads a batch head's row. */
  let batchHeadAt: BatchHeadReader | undefined;
  const batches = createBatchOpener();

  /** A stored record's key (`keyId`), loading it synchronously when the key store allows. */
  const readKeyOf = (keyId: string): Buffer => {
    const cached = keys.cached(keyId);
    if (cached) return cached;
    const loaded = absent.has(keyId) ? undefined : keys.load(keyId, false);
    if (loaded instanceof Promise) {
      // Cached when it resolves; this synchronous read cannot wait for it.
      loaded.catch(ignoreError("a key load this synchronous read cannot wait for; the read throws EncryptionKeyError"));
      throw new EncryptionKeyError(`The data key of session "${keyId}" is not loaded yet and the key provider is asynchronous: read the session through an asynchronous call first.`, {
        details: { keyId },
      });
    }
    if (!loaded) {
      throw new DataKeyUnavailableError(`The data key of session "${keyId}" is destroyed (the session was deleted): its encrypted content cannot be read.`, {
        details: { keyId, reason: "destroyed" },
      });
    }
    return loaded;
  };
  /** The key of a stored record's stream. */
  const readKey = (streamId: string): Buffer => {
    const keyId = keyIdOfStream(streamId);
    if (keyId === undefined) {
      throw new EventCorruptError(`Stream "${streamId}" holds encrypted data, but only session streams are encrypted.`, { details: { streamId } });
    }
    return readKeyOf(keyId);
  };
  const writeKeyOf = (keyId: string): Buffer => keys.cached(keyId) ?? readKeyOf(keyId);
  const writeKey = (streamId: string): Buffer => writeKeyOf(keyIdOfStream(streamId)!);
  /** Loads (creating when missing) the key `keyId` of a session. */
  const readyKey = (keyId: string, streamId: string): MaybePromise<void> => {
    if (keys.cached(keyId)) return;
    if (keyId.startsWith(RESERVED_KEY_ID_PREFIX)) {
      throw new InvalidArgumentError(`Stream "${streamId}": on an encrypted log a session id must not start with U+0001 (reserved for other keys).`, { details: { streamId } });
    }
    absent.delete(keyId);
    const loaded = keys.load(keyId, true);
    if (loaded instanceof Promise) return loaded.then(() => undefined);
  };
  const ready = (streamId: string): MaybePromise<void> => {
    const keyId = keyIdOfStream(streamId);
    return keyId === undefined ? undefined : readyKey(keyId, streamId);
  };
  /** Loads the key of the stream and of every task prompt among `events`. */
  const readyFor = (streamId: string, events: readonly PreparedEvent[]): MaybePromise<void> => {
    const pending: Promise<void>[] = [];
    // Writes to streams without a key wait for the key check too.
    const checked = keys.verify();
    if (checked instanceof Promise) pending.push(checked);
    // A session's first event: its key comes from the store, never from this process's cache. Another process may have deleted an earlier session
    // of this id (destroying its key) since this process cached it; sealing the new session with that key would make it unreadable everywhere.
    const ownKeyId = keyIdOfStream(streamId);
    if (ownKeyId !== undefined && events.some((event) => event.type === "session.created")) keys.forget(ownKeyId);
    const own = ready(streamId);
    if (own instanceof Promise) pending.push(own);
    for (const event of events) {
      const sessionId = promptSessionOf(streamId, event.type, event.data);
      const loading = sessionId === undefined ? undefined : readyKey(sessionId, `session-${sessionId}`);
      if (loading instanceof Promise) pending.push(loading);
    }
    if (pending.length > 0) return Promise.all(pending).then(() => undefined);
  };
  /** A `task.queued` record with its prompt opened, or {@link SHREDDED_PROMPT} once the session's key is destroyed. */
  const openPrompt = (record: EventRecord): EventRecord => {
    const sealed = sealedPromptOf(record);
    if (!sealed) return record;
    const { data, sessionId } = sealed;
    let key: Buffer;
    try {
      key = readKeyOf(sessionId);
    } catch (error) {
      // Crypto-shredded: the task stays readable (a worker ends it), its prompt does not.
      if (!DataKeyUnavailableError.isInstance(error)) throw error;
      return { ...record, dataJson: JSON.stringify({ ...data, input: SHREDDED_PROMPT }) };
    }
    const input = JSON.parse(openText(key, record.streamId, promptPurpose(record.eventId, sessionId), data.input.$enc)) as unknown;
    return { ...record, dataJson: JSON.stringify({ ...data, input }) };
  };

  /**
   * Runs `read` (which opens something of `streamId` with its key); when it fails to authenticate with a cached key, reads the key from the store
   * again and retries once: another process may have deleted the session (destroying the cached key) and a new session of the same id got a new one.
   */
  const withFreshKey = <T>(streamId: string, read: () => T): T => {
    try {
      return read();
    } catch (error) {
      const keyId = keyIdOfStream(streamId);
      const stale = keyId === undefined ? undefined : keys.cached(keyId);
      if (!EventCorruptError.isInstance(error) || keyId === undefined || stale === undefined) throw error;
      keys.forget(keyId);
      let fresh: Buffer;
      try {
        fresh = readKeyOf(keyId);
      } catch (reloading) {
        ignored("the key could not be read again; the first error says what is wrong", reloading);
        throw error;
      }
      if (fresh.equals(stale)) throw error;
      return read();
    }
  };
  /** A stored record with its data opened (a single record, a batch member, or a task's sealed prompt). */
  const openRecord = (record: EventRecord): EventRecord => {
    if (isSealedRecord(record.dataJson)) return { ...record, dataJson: openData(readKey(record.streamId), record, record.dataJson) };
    if (!isBatchSealed(record.dataJson)) return openPrompt(record);
    const key = readKey(record.streamId);
    if (!batchHeadAt) {
      throw new EventCorruptError(`The event "${record.eventId}" (stream "${record.streamId}") is sealed in a batch, which this log cannot read (PostgreSQL logs seal each event alone).`, {
        details: { streamId: record.streamId, eventId: record.eventId, eventType: record.type, field: "data" },
      });
    }
    return { ...record, dataJson: batches.open(key, record, record.dataJson, batchHeadAt) };
  };

  return {
    masterKeyId: keys.masterKeyId,
    rotate: () => keys.rotate(),
    encrypts: (streamId) => keyIdOfStream(streamId) !== undefined,
    ready,
    verify: () => keys.verify(),
    inOrder(streamId, events, run) {
      const loading = readyFor(streamId, events);
      if (!(loading instanceof Promise) && waiting === 0) return run();
      waiting += 1;
      const step = Promise.all([tail, loading]).then(run).finally(() => (waiting -= 1));
      tail = step.catch(ignoreError("a failed key step rejects its own caller; the chain only orders the steps"));
      return step;
    },
    seal(streamId, events) {
      if (keyIdOfStream(streamId) === undefined) {
        for (const event of events) {
          const sessionId = promptSessionOf(streamId, event.type, event.data);
          if (sessionId === undefined) continue;
          const data = fieldsOf(event.data);
          const sealed = sealText(writeKeyOf(sessionId), streamId, promptPurpose(event.eventId, sessionId), JSON.stringify(data.input));
          event.storedDataJson = JSON.stringify({ ...data, input: { $enc: sealed } });
        }
        return events;
      }
      const key = writeKey(streamId);
      if (batchHeadAt && events.length > 1) {
        const stored = sealEvents(key, streamId, events);
        for (let index = 0; index < events.length; index++) {
          events[index].storedDataJson = stored[index].data;
          if (stored[index].blob) events[index].sealedBlob = stored[index].blob;
        }
        return events;
      }
      for (const event of events) {
        event.storedDataJson = sealData(key, { streamId, eventId: event.eventId, type: event.type, schemaVersion: event.schemaVersion }, event.dataJson, event.data);
      }
      return events;
    },
    prepareRead(records) {
      const missing = new Set<string>();
      for (const record of records) {
        const keyId = isSealedData(record.dataJson) ? keyIdOfStream(record.streamId) : sealedPromptOf(record)?.sessionId;
        if (keyId !== undefined && !keys.cached(keyId)) missing.add(keyId);
      }
      const pending: Promise<unknown>[] = [];
      for (const keyId of missing) {
        const loaded = keys.load(keyId, false);
        const note = (key: Buffer | undefined) => {
          if (key) absent.delete(keyId);
          else if (absent.size < 10_000) absent.add(keyId);
        };
        if (loaded instanceof Promise) pending.push(loaded.then(note));
        else note(loaded);
      }
      if (pending.length > 0) return Promise.all(pending).then(() => undefined);
    },
    open: (record) => withFreshKey(record.streamId, () => openRecord(record)),
    sealInBatches(headAt) {
      batchHeadAt = headAt;
    },
    sealText: (streamId, purpose, text) => (keyIdOfStream(streamId) === undefined ? text : sealText(writeKey(streamId), streamId, purpose, text)),
    sealBlob: (tenant, hash, data) => chain(keys.load(tenantBlobKeyId(tenant), true), (key) => sealBytes(key!, `blob\0${tenant}\0${hash}`, data)),
    openBlob(tenant, hash, data) {
      if (!isSealedBytes(data)) return data;
      return chain(keys.load(tenantBlobKeyId(tenant), false), (key) => {
        if (!key) {
          throw new DataKeyUnavailableError(`The workspace key of tenant "${tenant}" is destroyed: its workspace blobs cannot be read.`, { details: { keyId: tenant, reason: "destroyed" } });
        }
        const plain = openBytes(key, `blob\0${tenant}\0${hash}`, data);
        if (!plain) throw new WorkspaceBlobError(`Workspace blob ${hash} of tenant "${tenant}" does not authenticate with the tenant's workspace key: it was altered or moved.`, { details: { hash, tenant } });
        return plain;
      });
    },
    digest: (streamId, purpose, text) => (keyIdOfStream(streamId) === undefined ? text : digestText(writeKey(streamId), streamId, purpose, text)),
    sealTextBytes: (streamId, purpose, text) => (keyIdOfStream(streamId) === undefined ? text : sealTextBytes(writeKey(streamId), streamId, purpose, text)),
    openText(streamId, purpose, text) {
      if (typeof text !== "string") return withFreshKey(streamId, () => openTextBytes(readKey(streamId), streamId, purpose, text));
      return isSealedText(text) ? withFreshKey(streamId, () => openText(readKey(streamId), streamId, purpose, text)) : text;
    },
    destroy(streamId) {
      const keyId = keyIdOfStream(streamId);
      // No session takes a reserved key id (a tenant's workspace key, the key check): a delete of such a stream destroys no key.
      if (!streamId.startsWith("session-") || keyId === undefined || keyId.startsWith(RESERVED_KEY_ID_PREFIX)) return;
      // No opened batch outlives a destroyed key.
      batches.clear();
      const done = keys.destroy(keyId);
      if (done instanceof Promise) return done.then(() => undefined);
    },
    close: () => rows.close(),
  };
}

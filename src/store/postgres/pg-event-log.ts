/**
 * The PostgreSQL event log (ours), on the `pg` package: one database shared by many processes and hosts, with the shared guarantees of
 * `event-log.ts`.
 * - the appends and deletes of one tick go to the server as ONE `append_rows` call (`pg-writer.ts`, `pg-append-rows.ts`; a named prepared
 *   statement), each append with its own version check and outcome; idempotency rests on `UNIQUE(event_id)`;
 * - every append locks the one `log_head` row, so positions commit in order without gaps (one commit at a time per schema);
 * - the read queries are `pg-reads.ts`; subscriptions catch up then go live: own commits wake them at once, other processes' by `LISTEN/NOTIFY`,
 *   with a head poll every `pollIntervalMs` as a fallback (`pg-tail.ts`);
 * - the schema is created or upgraded on first use (`pg-schema.ts`), a newer or foreign one is `LogSchemaError`; `ownership` (`pg-ownership.ts`)
 *   fences appends; each session append merges its summary row (`pg-summaries.ts`);
 * - errors beyond the contract: `LogCommitError` (`cause` is the pg error), `InvalidArgumentError` (bad options, unreachable database at open),
 *   `SessionBusyError` (a fenced-out owner's append); `pg` is required when a log is created, not when this module loads.
 */
import type pg from "pg";
import type { Observable } from "rxjs";
import { InvalidArgumentError, InvalidStateError, LogClosedError, LogCommitError } from "../../core/errors.ts";
import { lazyRequire } from "../../core/lazy-require.ts";
import type { AppendResult, EventLog, ListStreamsOptions, ReadAllOptions, ReadStreamOptions, StoredEvent, StreamInfo, SubscribeOptions } from "../event-log.ts";
import { createDefaultEventRegistry } from "../events/index.ts";
import type { EventRegistry } from "../events/registry.ts";
import { checkStreamId } from "../log/log-prepare.ts";
import { prepareAppend, rejectOnThrow } from "../log/log-requests.ts";
import { closeListeners, type CommitListener, createAsyncCatchUpObservable } from "../log/log-subscription.ts";
import { createPgOwnership } from "./pg-ownership.ts";
import { checkPostgresLog, migratePostgresLog, quoteSchema } from "./pg-schema.ts";
import { createPgReads } from "./pg-reads.ts";
import { createTail } from "./pg-tail.ts";
import { createBlobStore } from "../workspace/blob-store.ts";
import { createPostgresBlobRows } from "../workspace/pg-blob-rows.ts";
import { createPostgresMemoryIndex } from "../memory/pg-memory-index.ts";
import { readPgSummaries } from "./pg-summaries.ts";
import { endedKeptMessages, resolveDeltaRetention, type ActiveDeltaRetention, type DeltaRetention } from "../log/delta-retention.ts";
import type { DroppedDeltas } from "../log/delta-retention.ts";
import { appendAndDeleteDeltas, deletionsOf } from "./pg-delta-retention.ts";
import { createPgGroupWriter } from "./pg-writer.ts";
import { appendRowsQuery } from "./pg-append-rows.ts";
import type { StreamOwnership } from "../log/stream-ownership.ts";
import { createLogCipher, encryptionProvider, type EncryptionOptions } from "../crypto/log-cipher.ts";
import { streamsOfKey } from "../crypto/session-keys.ts";
import { createPgDataKeys } from "../crypto/pg-data-keys.ts";
import { encryptedLogParts, sealedAppend } from "../crypto/encrypted-log-parts.ts";
import { createPlainWriteGuard } from "../crypto/plain-write-guard.ts";
import { ignoreError } from "../../core/ignored.ts";

/**
 * Options of {@link createPostgresEventLog}. Give `connectionString` (the log owns and ends its pool) or `pool` (yours; the log never ends it). Times
 * in ms.
 */
export interface PostgresEventLogOptions {
  connectionString?: string;
  pool?: pg.Pool;
  /** The PostgreSQL schema holding the log's tables; default `"arbor"`. */
  schema?: string;
  /** Fallback poll of the head for subscriptions, in ms (LISTEN/NOTIFY is the wake-up). Default 1000. */
  pollIntervalMs?: number;
  /** Connections of the pool the log creates from `connectionString`. Default 4. */
  poolSize?: number;
  /** Event schemas; default `createDefaultEventRegistry()`. */
  registry?: EventRegistry;
  /**
   * Retention of the stored deltas of ended, kept messages (`delta-retention.ts`); default keep. `"delete"` deletes them in the transaction of the
   * `append_rows` call that commits the message's `message.ended` (`pg-delta-retention.ts`). `"drop"` empties them by one `UPDATE` right after that
   * commit (before its promise resolves): a crash in between keeps them, never loses text. The old row versions go at `VACUUM`, as with any
   * PostgreSQL update or delete.
   */
  retention?: DeltaRetention;
  /**
   * Open for reading only: the schema is checked, never created or migrated (`LogSchemaError` naming it when it is missing, not an Arbor log, or of
   * another version), and every append or delete is refused with `InvalidStateError`. Default false.
   */
  readOnly?: boolean;
  /**
   * Encryption at rest (opt-in; `crypto/log-cipher.ts`, `docs/privacy.md`): each session's event data and memory values sealed with its own data key
   * (AES-256-GCM), the keys wrapped by the master key in `<keySchema>.data_keys` (default schema `<schema>_keys`), a schema of its own so that
   * backups of the log's schema hold no key. Deleting a session destroys its key. The log then keeps no session summary rows; its workspace blobs are
   * sealed with a key per tenant. Another master key than the log was written with is `EncryptionKeyMismatchError` at open (the key check). The key
   * table is created by the first sealed write, never by an open or a read: a log with none yet opens and reads with any key, read-only too, and is
   * bound to a master key by its first sealed write. Without it, a schema whose `<schema>_keys.data_keys` table exists refuses
   * appends to and deletes of session streams (`DataKeyUnavailableError`, `reason: "no_encryption"`).
   */
  encryption?: EncryptionOptions;
}

/** A PostgreSQL {@link EventLog} with its cross-process stream ownership. */
export interface PostgresEventLog extends EventLog {
  readonly ownership: StreamOwnership;
  /** The PostgreSQL schema of the log. */
  readonly schema: string;
}

const loadPg = lazyRequire<typeof pg>("pg");

/**
 * Opens a PostgreSQL event log. Returns at once; the schema is created or checked (and, with `encryption`, the master key checked against the key
 * store's key check) on the first call (use {@link openPostgresEventLog} to wait for it): every operation rejects with that failure, e.g.
 * `EncryptionKeyMismatchError`. Throws `InvalidArgumentError` for bad options.
 *
 * @example
 * ```ts
 * const log = createPostgresEventLog({ connectionString: "postgres://postgres@127.0.0.1/test" });
 * ```
 */
export function createPostgresEventLog(options: PostgresEventLogOptions): PostgresEventLog {
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    throw new InvalidArgumentError("createPostgresEventLog needs exactly one of connectionString and pool.");
  }
  const schema = options.schema ?? "arbor";
  const s = quoteSchema(schema);
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  if (typeof pollIntervalMs !== "number" || !Number.isFinite(pollIntervalMs) || pollIntervalMs < 1) {
    throw new InvalidArgumentError(`pollIntervalMs must be a number ≥ 1 (ms), got ${String(pollIntervalMs)}.`);
  }
  const registry = options.registry ?? createDefaultEventRegistry();
  const retention = resolveDeltaRetention(options.retention);
  if (options.encryption !== undefined) {
    encryptionProvider(options.encryption);
    quoteSchema(options.encryption.keySchema ?? `${schema}_keys`);
  }
  const onDeltasDropped = retention?.mode === "drop" ? retention.report : undefined;
  const ownPool = options.pool === undefined;
  const { Pool, Client } = loadPg();
  const pool = options.pool ?? new Pool({ connectionString: options.connectionString, max: options.poolSize ?? 4, keepAlive: true });
  // LISTEN and the ownership locks use their own connections, outside the pool: a writer waiting for the head lock must never starve them (or the
  // pool) of a connection.
  const clientConfig: pg.ClientConfig = { ...(options.pool?.options ?? { connectionString: options.connectionString }), keepAlive: true };
  const dedicatedClient = async (): Promise<pg.Client> => {
    await ready;
    const client = new Client(clientConfig);
    client.on("error", ignoreError("an idle dedicated PostgreSQL client failed; its next query fails"));
    await client.connect();
    return client;
  };
  // An idle client's error (server restart, terminated backend) must not crash the process; the next query reconnects.
  if (ownPool) pool.on("error", ignoreError("an idle pooled PostgreSQL client failed; the next query reconnects"));
  const where = describeTarget(options);
  // A key table is created by the first sealed write; never for a log that already holds sealed data (its key table was lost or dropped). Asked
  // only while the key table is missing.
  const holdsSealedData = async (keyId?: string): Promise<boolean> => {
    const found = await pool.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [`${s}.events`]);
    if (found.rows[0]?.present !== true) return false;
    // With a session's key id: its streams only (a destroyed key whose rows remain is never made anew).
    const sealed =
      keyId === undefined
        ? await pool.query(`SELECT 1 FROM ${s}.events WHERE left(data::text, 8) = '{"$enc":' LIMIT 1`)
        : await pool.query(`SELECT 1 FROM ${s}.events WHERE stream_id = ANY($1::text[]) AND left(data::text, 8) = '{"$enc":' LIMIT 1`, [streamsOfKey(keyId)]);
    return (sealed.rowCount ?? 0) > 0;
  };
  const cipher =
    options.encryption &&
    createLogCipher(options.encryption, createPgDataKeys(pool, options.encryption.keySchema ?? `${schema}_keys`, { readOnly: options.readOnly === true }), {
      log: `schema "${schema}" at ${where}`,
      readOnly: options.readOnly === true,
      holdsSealedData,
    });

  let closed = false;
  const listeners = new Set<CommitListener>();
  const wakeAll = (): void => {
    for (const listener of listeners) listener.wake();
  };

  const ready: Promise<void> = (async () => {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw new InvalidArgumentError(`Could not connect to PostgreSQL at ${where}: ${(error as Error).message}.`, { cause: error });
    }
    if (cipher) {
      // The key check before the log's schema is migrated, on the pool's other connections; every operation waits for ready, so with another
      // master key (EncryptionKeyMismatchError) none reads or writes anything.
      client.release();
      await cipher.verify();
      client = await pool.connect();
    }
    try {
      if (options.readOnly === true) await checkPostgresLog(client, schema, where);
      else await migratePostgresLog(client, schema);
    } finally {
      client.release();
    }
  })();
  ready.catch(ignoreError("a failed schema check or migration is thrown by every operation that waits for ready"));
  // Without encryption, a store whose default key table exists was written encrypted: its sessions' writes are refused.
  const keyTable = `"${schema}_keys".data_keys`;
  const plainGuard = cipher
    ? undefined
    : createPlainWriteGuard(async () => ((await query<{ found: string | null }>("SELECT to_regclass($1) AS found", [keyTable]))[0]?.found == null ? undefined : keyTable));

  const ensureOpen = (operation: string): void => {
    if (closed) throw new LogClosedError(`The PostgreSQL event log is closed; cannot ${operation}.`);
  };
  const refuseWrite = (operation: string): void => {
    if (options.readOnly === true) throw new InvalidStateError(`The PostgreSQL event log (schema "${schema}") was opened read-only; cannot ${operation}.`);
  };
  const query = async <Row extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<Row[]> => {
    await ready;
    return (await pool.query<Row>(text, values)).rows;
  };

  const writer = createPgGroupWriter({
    async call(values, writes) {
      const deleting = retention?.mode === "delete" ? deletionsOf(writes) : [];
      await ready;
      if (deleting.length === 0) return (await pool.query<{ outcomes: unknown[] }>(appendRowsQuery(schema, values))).rows[0].outcomes;
      return appendAndDeleteDeltas(pool, s, appendRowsQuery(schema, values), deleting, (retention as ActiveDeltaRetention).report);
    },
    onCommitted: wakeAll,
    ...(cipher ? { summaries: false, openRecord: cipher.open } : {}),
  });
  const ownership = createPgOwnership({ pool, schema, ready, connect: dedicatedClient });

  /** Empties the deltas of the messages an append ended and kept, and reports each saving. */
  const dropDeltas = async (streamId: string, messageIds: string[], report: (saved: DroppedDeltas) => void): Promise<void> => {
    for (const messageId of messageIds) {
      const [saved] = await query<{ events: number; bytes: string }>(
        `WITH target AS (
           SELECT global_position, octet_length(data->>'delta') AS bytes FROM ${s}.events
           WHERE stream_id = $1 AND type = 'message.delta' AND data->>'messageId' = $2 AND data->>'delta' <> ''),
         emptied AS (
           UPDATE ${s}.events e SET data = (e.data::jsonb || '{"delta": ""}'::jsonb)::json FROM target t WHERE e.global_position = t.global_position RETURNING 1)
         SELECT (SELECT count(*) FROM emptied)::int AS events, coalesce((SELECT sum(bytes) FROM target), 0)::text AS bytes`,
        [streamId, messageId],
      );
      if (saved.events > 0) report({ messageId, events: saved.events, bytes: Number(saved.bytes) });
    }
  };

  const reads = createPgReads(query, s, cipher);
  const tail = createTail({ pool, connect: dedicatedClient, ready, schema, pollIntervalMs, wake: wakeAll, listeners });

  return {
    ownership,
    tenantIndex: true,
    schema,
    ...(cipher
      ? encryptedLogParts(cipher, createPostgresMemoryIndex(pool, s, ready, refuseWrite), createPostgresBlobRows(pool, s, ready, refuseWrite), async (streamId) => {
          ensureOpen("readClear");
          return reads.readRecords(streamId);
        })
      : {
          workspaceBlobs: createBlobStore(createPostgresBlobRows(pool, s, ready, refuseWrite)),
          memoryIndex: createPostgresMemoryIndex(pool, s, ready, refuseWrite),
          // Summary rows hold titles and first messages: an encrypted log keeps none (the list folds).
          sessionSummaries: {
            async read(readOptions: { tenant?: string } = {}) {
              ensureOpen("read session summaries");
              await ready;
              return readPgSummaries(pool, s, readOptions.tenant);
            },
          },
        }),
    append(streamId, events, appendOptions = {}) {
      return rejectOnThrow(() => {
        ensureOpen("append");
        refuseWrite("append");
        const { expected, prepared } = prepareAppend(registry, streamId, events, appendOptions);
        const fence = ownership.tokenOf(streamId);
        const appended = cipher
          ? sealedAppend(cipher, streamId, prepared, (sealed, resolve, reject) => writer.enqueue({ kind: "append", streamId, events: sealed, expected, fence, resolve, reject }))
          : plainGuard!(streamId, "append", () => new Promise<AppendResult>((resolve, reject) => writer.enqueue({ kind: "append", streamId, events: prepared, expected, fence, resolve, reject })));
        const ended = onDeltasDropped ? endedKeptMessages(prepared) : [];
        if (!onDeltasDropped || ended.length === 0) return appended;
        return appended.then(async (result) => {
          if (!result.duplicate) await dropDeltas(streamId, ended, onDeltasDropped);
          return result;
        });
      });
    },

    async readStream(streamId: string, readOptions: ReadStreamOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readStream");
      return reads.readStream(streamId, readOptions);
    },

    async readAll(readOptions: ReadAllOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readAll");
      return reads.readAll(readOptions);
    },

    async streamVersion(streamId: string): Promise<number> {
      ensureOpen("streamVersion");
      return reads.streamVersion(streamId);
    },

    async listStreams(listOptions: ListStreamsOptions = {}): Promise<StreamInfo[]> {
      ensureOpen("listStreams");
      return reads.listStreams(listOptions);
    },

    deleteStream(streamId: string): Promise<number> {
      return rejectOnThrow(() => {
        ensureOpen("deleteStream");
        refuseWrite("deleteStream");
        checkStreamId(streamId);
        const remove = () => new Promise<number>((resolve, reject) => writer.enqueue({ kind: "delete", streamId, resolve, reject }));
        // The session's key goes first (`crypto/log-cipher.ts`): a delete that fails after it leaves unreadable rows.
        if (!cipher) return plainGuard!(streamId, "deleteStream", remove);
        return Promise.resolve(cipher.destroy(streamId)).then(remove, async (error: unknown) => {
          // The key is gone but an older snapshot kept a copy of its row: the rows go too, then the caller hears why.
          if (LogCommitError.isInstance(error) && error.details.keyDeleted === true) await remove();
          throw error;
        });
      });
    },

    subscribe(subscribeOptions?: SubscribeOptions): Observable<StoredEvent> {
      ensureOpen("subscribe");
      return createAsyncCatchUpObservable({ readPage: reads.readPage, listen: tail.listen }, subscribeOptions);
    },

    async headPosition(): Promise<number> {
      ensureOpen("headPosition");
      return reads.headPosition();
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await writer.drain();
      closeListeners(listeners);
      await tail.stop();
      await ownership.close();
      await cipher?.close();
      if (ownPool) await pool.end();
    },
  };
}

/**
 * {@link createPostgresEventLog}, then waits until the schema is created or checked. Rejects with `LogSchemaError` (newer or foreign schema),
 * `InvalidArgumentError` (unreachable database) or, with `encryption`, `EncryptionKeyMismatchError` (another master key than the log was written with;
 * nothing read or written); the pool it created is ended then.
 *
 * @example
 * ```ts
 * const log = await openPostgresEventLog({ connectionString: "postgres://postgres@127.0.0.1/test", schema: "tenant_a" });
 * ```
 */
export async function openPostgresEventLog(options: PostgresEventLogOptions): Promise<PostgresEventLog> {
  const log = createPostgresEventLog(options);
  try {
    await log.headPosition();
    return log;
  } catch (error) {
    await log.close().catch(ignoreError("closing a log whose start failed; the start's error is thrown"));
    throw error;
  }
}

function describeTarget(options: PostgresEventLogOptions): string {
  if (options.connectionString === undefined) return "the given pool";
  try {
    const url = new URL(options.connectionString);
    url.password = url.password ? "***" : "";
    return url.toString();
  } catch {
    return "the given connection string";
  }
}

/**
 * Opens the CLI's event log and session repository and resolves session references: a full id, a unique prefix, a unique prefix of the short id
 * (last 8 hex digits), or `latest` (most recently appended); anything else is a `CliError` listing the matches. `readOnly` stores write nothing;
 * `--retention` picks the delta retention; writable SQLite stores open the snapshot cache beside the log. `close()` must be called.
 */
import { existsSync } from "node:fs";
import type { CustomEntry } from "../core/entries.ts";
import { assertNoLiveRun } from "../machines/run-lease.ts";
import type { EventLog } from "../store/event-log.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import { createRedactingEventLog } from "../store/log/redacting-event-log.ts";
import type { SessionSummary } from "../store/session-types.ts";
import { createPostgresEventLog } from "../store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../store/sqlite/sqlite-event-log.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import { openSnapshotsBeside } from "../store/session/session-snapshots.ts";
import { countStoredKeys, keyFileBeside } from "../store/crypto/sqlite-data-keys.ts";
import { encryptionFromEnv } from "./encryption-env.ts";
import { pgKeyTable } from "./key-store.ts";
import type { SessionHandle, SessionRepository } from "../store/session-types.ts";
import { SessionNotFoundError } from "../core/errors.ts";
import { CliError } from "./cli-error.ts";
import { warnIfDamaged } from "./damaged-warning.ts";
import { isPostgresUrl, resolveDbPath, type RecordedEndpoint, type ResolvedModelSettings } from "./config.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { DeltaRetentionMode } from "../core/vocabulary.ts";

/** The custom entry type recording the endpoint a session last ran against (no key). */
export const ENDPOINT_ENTRY_TYPE = "arbor.endpoint";

/** An open log plus repository. */
export interface CliStore {
  readonly dbPath: string;
  /** The PostgreSQL connection string (with its password) when the store is PostgreSQL. */
  readonly postgresUrl?: string;
  /** The tenant whose sessions this store sees (`--tenant`, `ARBOR_TENANT`, else `default`). */
  readonly tenant: string;
  /** The whole log (every tenant's streams), for readers that need events, e.g. `arbor replay`. */
  readonly log: EventLog;
  readonly repo: SessionRepository;
  /** Sessions, the one appended to most recently first (the order `latest` uses), each with that time (`updatedAt`, ISO). */
  listNewestFirst(): Promise<SessionSummary[]>;
  /** {@link listNewestFirst} without the damaged sessions (they cannot be opened), each passed over with a warning on stderr. */
  listOpenable(): Promise<SessionSummary[]>;
  /** Registers secrets (an API key, a URL password) that must never be written to the log. */
  addSecrets(secrets: readonly string[]): void;
  /** Resolves a full id, a unique prefix or `latest`, and opens it. */
  resolveSessionId(reference: string): Promise<string>;
  openSession(reference: string): Promise<SessionHandle>;
  /** Opens a session to change it; refuses (SessionBusyError) while another process runs it. */
  openSessionForWrite(reference: string): Promise<SessionHandle>;
  /**
   * Checks the store before a long-running command serves anything (`arbor serve`, `arbor worker`): the log opens (PostgreSQL: its schema and, with
   * a key, the key check), and a PostgreSQL store whose key table exists while `ARBOR_ENCRYPTION_KEY` is not set is a `CliError` (exit 2) naming the
   * variable. (A SQLite store is checked by {@link openStore} itself.)
   */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The global flags that name the store: `--db`, `--tenant`, `--retention`. */
export interface StoreFlags {
  db?: string;
  tenant?: string;
  retention?: string;
}

/** How {@link openStore} opens the store. */
interface OpenStoreOptions {
  mustExist?: boolean;
  readOnly?: boolean;
  allTenants?: boolean;
}

const RETENTION_POLICIES: Record<string, DeltaRetentionMode | undefined> = { keep: "keep", "drop-deltas": "drop", "delete-deltas": "delete" };

/** Opens the database named by `--db`, `ARBOR_DB` or `.arbor/arbor.db`. */
export function openStore(flags: StoreFlags, options: OpenStoreOptions = {}): CliStore {
  const tenant = flags.tenant ?? process.env.ARBOR_TENANT ?? "default";
  if (tenant.trim() === "") throw new CliError("--tenant (or ARBOR_TENANT) is empty: give a tenant id, or leave it out for the default tenant.");
  const policy = (flags.retention ?? process.env.ARBOR_RETENTION ?? "delete-deltas").trim();
  const mode = RETENTION_POLICIES[policy];
  if (mode === undefined) throw new CliError(`--retention (or ARBOR_RETENTION) must be delete-deltas, drop-deltas or keep; got ${JSON.stringify(policy)}.`);
  const retention = mode !== "keep" && options.readOnly !== true ? { retention: { endedMessageDeltas: mode } } : {};
  const mustExist = options.mustExist === true || options.readOnly === true;
  const target = resolveDbPath(flags.db, process.env, process.cwd(), { create: !mustExist });
  const postgres = isPostgresUrl(target);
  const dbPath = postgres ? displayUrl(target) : target;
  if (mustExist && !postgres && !existsSync(dbPath)) {
    const chosen = flags.db !== undefined ? "given with --db" : process.env.ARBOR_DB ? "given by ARBOR_DB" : "the default, .arbor/arbor.db in the current directory";
    throw new CliError(`No Arbor database at ${dbPath} yet (${chosen}). Pass --db PATH or set ARBOR_DB to use another, or start a session with: arbor run --model openai:<model> "your prompt".`, 1);
  }
  // ARBOR_ENCRYPTION_KEY: every session sealed with its own data key (docs/privacy.md).
  const encryption = encryptionFromEnv(process.env);
  // A store created encrypted is only ever opened with its key: without it a run would write its
  // session (and a snapshot file) in clear beside the sealed ones.
  if (!encryption && !postgres && existsSync(keyFileBeside(dbPath))) throw keylessRefusal(dbPath, keyFileBeside(dbPath));
  const sealed = encryption ? { encryption } : {};
  const schema = process.env.ARBOR_DB_SCHEMA ?? "arbor";
  const log = createRedactingEventLog(postgres ? createPostgresEventLog({ connectionString: target, schema, ...retention, ...sealed, ...(options.readOnly === true ? { readOnly: true } : {}) }) : createSqliteEventLog({ path: dbPath, readOnly: options.readOnly === true, ...retention, ...sealed }));
  if (postgres) {
    const password = new URL(target).password;
    if (password) log.addSecret(decodeURIComponent(password));
  }
  // One tenant's sessions (default `default`); another tenant's look exactly like missing ones. Snapshots beside a writable SQLite log make large
  // sessions open without folding their whole stream. Snapshots hold entries in clear: an encrypted store keeps none.
  const snapshots = postgres || encryption || options.readOnly === true ? undefined : openSnapshotsBeside(dbPath);
  const repo = createSessionRepository({ log, ...(snapshots ? { snapshots } : {}), ...(options.allTenants ? {} : { tenant }) });
  const resolveSessionId = async (reference: string): Promise<string> => {
    const sessions = await repo.list();
    if (reference === "latest") {
      if (sessions.length === 0) throw new CliError(`No sessions yet in ${dbPath}. Start one with: arbor run "your prompt"`);
      // repo.list() is newest first (the one order of session lists); a damaged session cannot be opened, so `latest` is the newest that can.
      const newest = sessions.find((session) => !session.damaged);
      if (!newest) throw new CliError(`Every session in ${dbPath} is damaged and cannot be opened: run arbor doctor to check the log.`);
      return newest.id;
    }
    const exact = sessions.find((session) => session.id === reference);
    if (exact) return exact.id;
    const wanted = reference.toLowerCase();
    const matches = sessions.filter((session) => session.id.startsWith(wanted) || (wanted.length >= 4 && shortSessionId(session.id).startsWith(wanted)));
    if (matches.length === 1) return matches[0].id;
    if (matches.length === 0) throw new CliError(`No session "${reference}" in ${dbPath}. List them with: arbor sessions`);
    throw new CliError(
      `Session "${reference}" is ambiguous: ${matches.map((session) => `${shortSessionId(session.id)} (${session.id})`).join(", ")}. Use the short id arbor sessions shows, or more of the id.`,
    );
  };
  /** A full session id opens directly, without listing every session (opening costs O(the context)). */
  const openExact = async (reference: string): Promise<SessionHandle | undefined> => {
    if (reference === "latest" || (await log.streamVersion(sessionStreamId(reference))) === 0) return undefined;
    try {
      return await repo.open(reference);
    } catch (error) {
      if (SessionNotFoundError.isInstance(error)) return undefined;
      throw error;
    }
  };
  return {
    dbPath,
    ...(postgres ? { postgresUrl: target } : {}),
    tenant,
    log,
    repo,
    resolveSessionId,
    listNewestFirst: () => repo.list({ stats: true }),
    listOpenable: async () => (await repo.list()).filter((session) => !warnIfDamaged(session)),
    addSecrets: (secrets) => {
      for (const secret of secrets) log.addSecret(secret);
    },
    async openSession(reference) {
      return (await openExact(reference)) ?? repo.open(await resolveSessionId(reference));
    },
    async openSessionForWrite(reference) {
      const exact = await openExact(reference);
      const id = exact?.id ?? (await resolveSessionId(reference));
      const session = exact ?? (await repo.open(id));
      // The opened view's activity projection says whether its last run is live (no second read).
      await assertNoLiveRun(log, sessionStreamId(id), session.view.activity);
      return session;
    },
    async ready() {
      // Waits for the log's own checks (a wrong key is EncryptionKeyMismatchError here, not at the first request).
      await log.headPosition();
      if (!postgres || encryption) return;
      const keyTable = await pgKeyTable(target, schema);
      if (keyTable?.dataKeys === 0) {
        throw new CliError(
          `${dbPath} (schema "${schema}") has a key table (${keyTable.table}) that holds no data key: nothing in the log is sealed, but the table binds it to the master key it was created with, and ARBOR_ENCRYPTION_KEY is not set. Set it to that key; or, if the table is a leftover (its sealed sessions were all deleted, or an earlier Arbor created it for a command that sealed nothing), drop the schema "${schema}_keys" to use the log without encryption. Nothing in the log was read or written.`,
          2,
        );
      }
      if (keyTable !== undefined) {
        throw new CliError(`${dbPath} (schema "${schema}") is an encrypted store (its key table ${keyTable.table} exists), and ARBOR_ENCRYPTION_KEY is not set: set it to the store's master key. Nothing was read or written.`, 2);
      }
    },
    close: async () => {
      await log.close();
      snapshots?.close();
    },
  };
}

/**
 * The refusal of a keyless command on a SQLite store with a key file: the file binds the log to one master key even when it holds no data key
 * (nothing in the log is sealed: every sealed session was deleted, or an earlier Arbor created it at a keyed open that sealed nothing).
 */
function keylessRefusal(dbPath: string, keyFile: string): CliError {
  if (countStoredKeys(keyFile) === 0) {
    return new CliError(
      `${dbPath} has a key file beside it (${keyFile}) that holds no data key: nothing in the log is sealed, but the key file binds it to the master key it was created with, and ARBOR_ENCRYPTION_KEY is not set. Set it to that key; or, if the key file is a leftover (its sealed sessions were all deleted, or an earlier Arbor created it for a command that sealed nothing), move it away to use the log without encryption. Nothing in the log was read or written.`,
      2,
    );
  }
  return new CliError(`${dbPath} is an encrypted store (its key file ${keyFile} is beside it), and ARBOR_ENCRYPTION_KEY is not set: set it to the store's master key. Nothing was read or written.`, 2);
}

/** Opens the store as {@link openStore} does, runs `use` with it and closes it, whether `use` returns or throws: the body of most commands. */
export async function withStore<T>(flags: StoreFlags, options: OpenStoreOptions, use: (store: CliStore) => Promise<T>): Promise<T> {
  const store = openStore(flags, options);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** True when the log `--db`/`ARBOR_DB`/the default names exists (always for PostgreSQL); a bad path throws `CliError`. */
export function storeExists(flags: { db?: string }): boolean {
  const target = resolveDbPath(flags.db, process.env, process.cwd(), { create: false });
  return isPostgresUrl(target) || existsSync(target);
}

/** A connection string for messages: the password masked. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "the PostgreSQL database";
  }
}

/** The short id of a session (`arbor sessions`, accepted wherever a session is named): the last 8 hex digits, a UUIDv7's random tail. */
export function shortSessionId(id: string): string {
  return id.replace(/-/g, "").slice(-8);
}

/** Resolves an entry reference: a full id, a label, or a unique id prefix, in that order. Throws `CliError` for none or several. */
export function resolveEntryId(session: SessionHandle, reference: string): string {
  if (reference.trim() === "") throw new CliError(`No entry given: name one by its id, a unique prefix of it, or its label. See them with: arbor tree ${session.id}`);
  if (session.view.getEntry(reference)) return reference;
  const entries = session.view.getEntries();
  const labelled = entries.filter((entry) => session.view.getLabel(entry.id) === reference);
  if (labelled.length === 1) return labelled[0].id;
  if (labelled.length > 1) throw new CliError(`Label "${reference}" is on several entries in session ${session.id}: ${labelled.map((entry) => entry.id).join(", ")}. Use an id.`);
  const matches = entries.filter((entry) => entry.id.startsWith(reference));
  if (matches.length === 1) return matches[0].id;
  if (matches.length === 0) throw new CliError(`No entry or label "${reference}" in session ${session.id}. See the ids and labels with: arbor tree ${session.id}`);
  throw new CliError(`Entry "${reference}" is ambiguous in session ${session.id}: ${matches.map((entry) => entry.id).join(", ")}.`);
}

/** The endpoint a session recorded on its last CLI run, if any. */
export function recordedEndpoint(session: SessionHandle): RecordedEndpoint {
  const entries = session.view.getEntries();
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry.type === "custom" && (entry as CustomEntry).customType === ENDPOINT_ENTRY_TYPE) return ((entry as CustomEntry).data ?? {}) as RecordedEndpoint;
  }
  return {};
}

/** `url` without user and password (they are secrets; pass them again with --base-url). */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Records the endpoint (model, base URL without credentials, API, context window; never the key) when it changed. */
export async function recordEndpoint(session: SessionHandle, settings: ResolvedModelSettings): Promise<void> {
  const current: RecordedEndpoint = {
    model: `${settings.spec.provider}:${settings.spec.modelId}`,
    ...(settings.baseURL ? { baseURL: withoutCredentials(settings.baseURL) } : {}),
    api: settings.api,
    ...(settings.contextWindow ? { contextWindow: settings.contextWindow } : {}),
  };
  if (JSON.stringify(recordedEndpoint(session)) === JSON.stringify(current)) return;
  // Through the session's one writer (the harness's agent's, when it has one).
  await sessionActorOf(session).writes.appendEntries([{ type: "custom", customType: ENDPOINT_ENTRY_TYPE, data: current }]);
}

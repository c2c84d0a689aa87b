/**
 * Opens the CLI's event log and session repository, and resolves session and
 * entry references typed by the user.
 *
 * Contract (ours):
 * - a session reference is a full id, a unique prefix of one, or (4 characters or more) a
 *   unique prefix of a short id: the last 8 hex digits of the id (`shortSessionId`; UUIDv7 ids made within a minute share
 *   their first 8 characters, their random tails do not); `latest` means the most recently
 *   modified session;
 * - an ambiguous or unknown reference throws `CliError` listing what matched;
 * - `latest` is the session whose stream was appended to most recently (a fresh fork
 *   counts, unlike pi's "last message time"; an imported session counts from its own latest
 *   entry, not the import); `arbor sessions` lists in that order;
 * - `mustExist` stores refuse a missing database file instead of creating one; `readOnly`
 *   stores (the commands that only read) also open the log without writing anything (no WAL
 *   switch, no migration), so they work on read-only files, folders and mounts;
 * - `--retention` (or `ARBOR_RETENTION`): `delete-deltas` (the default) opens a
 *   writable log with `retention.endedMessageDeltas: "delete"` (the streamed deltas of a message
 *   are deleted once it ended and was kept; its entry has the text), `drop-deltas` with `"drop"`
 *   (their text is emptied, the rows stay), `keep` keeps them; anything else is a `CliError`;
 * - a writable SQLite store opens the snapshot file beside the log (`arbor.snapshots.db`,
 *   `openSnapshotsBeside`; a cache, skipped when unusable), so a large session opens from its
 *   checkpoint instead of folding its whole stream; read-only and PostgreSQL stores have none;
 * - `close()` must be called; it closes the log (and the snapshot file).
 *
 * @example
 * ```ts
 * const store = openStore({ db: undefined });
 * try { const session = await store.openSession("0192"); } finally { await store.close(); }
 * ```
 */
import { existsSync } from "node:fs";
import type { CustomEntry } from "../core/entries.ts";
import { assertNoLiveRun } from "../machines/run-lease.ts";
import type { EventLog } from "../store/event-log.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import { createRedactingEventLog } from "../store/redacting-event-log.ts";
import type { SessionSummary } from "../store/session-types.ts";
import { createPostgresEventLog } from "../store/pg-event-log.ts";
import { createSqliteEventLog } from "../store/sqlite-event-log.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import { openSnapshotsBeside } from "../store/session-snapshots.ts";
import type { SessionHandle, SessionRepository } from "../store/session-types.ts";
import { SessionNotFoundError } from "../core/errors.ts";
import { CliError } from "./cli-error.ts";
import { isPostgresUrl, resolveDbPath, type RecordedEndpoint, type ResolvedModelSettings } from "./config.ts";
import { sessionStreamId } from "../store/events/session-events.ts";

/** The custom entry type recording the endpoint a session last ran against (no key). */
export const ENDPOINT_ENTRY_TYPE = "arbor.endpoint";

/** An open log plus repository. */
export interface CliStore {
  readonly dbPath: string;
  /** The whole log (every tenant's streams), for readers that need events, e.g. `arbor replay`. */
  readonly log: EventLog;
  readonly repo: SessionRepository;
  /** Sessions, the one appended to most recently first (the order `latest` uses), each with that time (`updatedAt`, ISO). */
  listNewestFirst(): Promise<SessionSummary[]>;
  /** Registers secrets (an API key, a URL password) that must never be written to the log. */
  addSecrets(secrets: readonly string[]): void;
  /** Resolves a full id, a unique prefix or `latest`, and opens it. */
  resolveSessionId(reference: string): Promise<string>;
  openSession(reference: string): Promise<SessionHandle>;
  /** Opens a session to change it; refuses (SessionBusyError) while another process runs it. */
  openSessionForWrite(reference: string): Promise<SessionHandle>;
  close(): Promise<void>;
}

const RETENTION_POLICIES: Record<string, "keep" | "drop" | "delete" | undefined> = { keep: "keep", "drop-deltas": "drop", "delete-deltas": "delete" };

/** Opens the database named by `--db`, `ARBOR_DB` or `.arbor/arbor.db`. */
export function openStore(flags: { db?: string; tenant?: string; retention?: string }, options: { mustExist?: boolean; readOnly?: boolean; allTenants?: boolean } = {}): CliStore {
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
    throw new CliError(`No Arbor database at ${dbPath} yet (the default is .arbor/arbor.db in the current directory). Pass --db PATH or set ARBOR_DB to use another, or start a session with: arbor run --model openai:<model> "your prompt".`, 1);
  }
  const log = createRedactingEventLog(postgres ? createPostgresEventLog({ connectionString: target, schema: process.env.ARBOR_DB_SCHEMA ?? "arbor", ...retention, ...(options.readOnly === true ? { readOnly: true } : {}) }) : createSqliteEventLog({ path: dbPath, readOnly: options.readOnly === true, ...retention }));
  if (postgres) {
    const password = new URL(target).password;
    if (password) log.addSecret(decodeURIComponent(password));
  }
  // One tenant's sessions (default `default`); another tenant's look exactly like missing ones.
  // Snapshots beside a writable SQLite log make large sessions open without folding their whole stream.
  const snapshots = postgres || options.readOnly === true ? undefined : openSnapshotsBeside(dbPath);
  const repo = createSessionRepository({ log, ...(snapshots ? { snapshots } : {}), ...(options.allTenants ? {} : { tenant }) });
  const resolveSessionId = async (reference: string): Promise<string> => {
    const sessions = await repo.list();
    if (reference === "latest") {
      if (sessions.length === 0) throw new CliError(`No sessions yet in ${dbPath}. Start one with: arbor run "your prompt"`);
      // repo.list() is newest first (the one order of session lists).
      return sessions[0].id;
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
    log,
    repo,
    resolveSessionId,
    listNewestFirst: () => repo.list({ stats: true }),
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
    close: async () => {
      await log.close();
      snapshots?.close();
    },
  };
}

/**
 * True when the log named by `--db`/`ARBOR_DB`/the default exists (always for PostgreSQL); a bad
 * path (a folder, a file where a folder should be, an empty `--db`) throws `CliError`.
 */
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

/**
 * The short id of a session, shown by `arbor sessions` and accepted wherever a session is named:
 * the last 8 hex digits of its id (the random tail of a UUIDv7).
 *
 * @example
 * ```ts
 * shortSessionId("01a231d7-fdea-7238-8369-d11c079a1b3b"); // "079a1b3b"
 * ```
 */
export function shortSessionId(id: string): string {
  return id.replace(/-/g, "").slice(-8);
}

/**
 * Resolves an entry reference within a session: a full id, a label (the entry that label
 * names now), or a unique id prefix, in that order. Throws `CliError` for none or several.
 */
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

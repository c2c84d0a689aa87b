/**
 * Opens the CLI's event log and session repository, and resolves session and
 * entry references typed by the user.
 *
 * Contract (ours):
 * - a session reference is a full id or a unique prefix of one; `latest` means the
 *   most recently modified session;
 * - an ambiguous or unknown reference throws `CliError` listing what matched;
 * - `close()` must be called; it closes the log.
 *
 * @example
 * ```ts
 * const store = openStore({ db: undefined });
 * try { const session = await store.openSession("0192"); } finally { await store.close(); }
 * ```
 */
import { createSqliteEventLog } from "../store/sqlite-event-log.ts";
import { createSessionRepository, type ArborSessionRepository } from "../store/session-repository.ts";
import type { ArborSessionHandle } from "../store/session-handle.ts";
import { CliError } from "./cli-error.ts";
import { resolveDbPath } from "./config.ts";

/** An open log plus repository. */
export interface CliStore {
  readonly dbPath: string;
  readonly repo: ArborSessionRepository;
  /** Resolves a full id, a unique prefix or `latest`, and opens it. */
  resolveSessionId(reference: string): Promise<string>;
  openSession(reference: string): Promise<ArborSessionHandle>;
  close(): Promise<void>;
}

/** Opens the database named by `--db`, `ARBOR_DB` or `.arbor/arbor.db`. */
export function openStore(flags: { db?: string }): CliStore {
  const dbPath = resolveDbPath(flags.db);
  const log = createSqliteEventLog({ path: dbPath });
  const repo = createSessionRepository({ log });
  const resolveSessionId = async (reference: string): Promise<string> => {
    const sessions = await repo.list();
    if (reference === "latest") {
      if (sessions.length === 0) throw new CliError(`No sessions yet in ${dbPath}. Start one with: arbor run "your prompt"`);
      return sessions[0].id;
    }
    const exact = sessions.find((session) => session.id === reference);
    if (exact) return exact.id;
    const matches = sessions.filter((session) => session.id.startsWith(reference));
    if (matches.length === 1) return matches[0].id;
    if (matches.length === 0) throw new CliError(`No session "${reference}" in ${dbPath}. List them with: arbor sessions`);
    throw new CliError(`Session "${reference}" is ambiguous: ${matches.map((session) => session.id).join(", ")}. Type more of the id.`);
  };
  return {
    dbPath,
    repo,
    resolveSessionId,
    async openSession(reference) {
      return repo.open(await resolveSessionId(reference));
    },
    close: () => log.close(),
  };
}

/** Resolves an entry id or a unique prefix within a session. */
export function resolveEntryId(session: ArborSessionHandle, reference: string): string {
  if (session.view.getEntry(reference)) return reference;
  const matches = session.view.getEntries().filter((entry) => entry.id.startsWith(reference));
  if (matches.length === 1) return matches[0].id;
  if (matches.length === 0) throw new CliError(`No entry "${reference}" in session ${session.id}. See the ids with: arbor tree ${session.id}`);
  throw new CliError(`Entry "${reference}" is ambiguous in session ${session.id}: ${matches.map((entry) => entry.id).join(", ")}.`);
}

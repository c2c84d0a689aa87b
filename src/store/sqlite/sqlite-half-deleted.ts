/**
 * `findHalfDeletedSessions`, for `arbor doctor` (ours; `docs/privacy.md`): sessions of an encrypted SQLite log holding sealed data with no row in
 * the key file beside the log (an interrupted delete), whatever their first event. Read-only, without the master key.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { keyFileBeside } from "../crypto/sqlite-data-keys.ts";
import { SEALED_PREFIX } from "../crypto/sealed-record.ts";
import { sessionIdOfStream } from "../events/session-events.ts";
import { ignored } from "../../core/ignored.ts";

/** A half-deleted session: its id and the tenant its `session.created` keeps in clear (`default` when it names none). */
export interface HalfDeletedSession {
  sessionId: string;
  tenant: string;
}

/**
 * The half-deleted sessions of the log file at `path` (see the module contract), in log order. Opens the log and its key file read-only and writes
 * nothing; a file that cannot be read this way is thrown (the caller checks the file itself first).
 */
export function findHalfDeletedSessions(path: string, options: { keyFile?: string } = {}): HalfDeletedSession[] {
  const keyFile = options.keyFile ?? keyFileBeside(path);
  if (!existsSync(keyFile)) return [];
  const log = new Database(path, { readonly: true, fileMustExist: true });
  const keys = new Database(keyFile, { readonly: true, fileMustExist: true });
  try {
    // Each session stream with its first event, when any of its events is sealed (its data starts as `isSealedData` checks).
    const firsts = log
      .prepare(
        `SELECT e.stream_id AS streamId, e.type, e.data FROM streams s JOIN events e ON e.stream_id = s.stream_id AND e.version = 1
         WHERE s.stream_id LIKE 'session-%' AND EXISTS (SELECT 1 FROM events x WHERE x.stream_id = s.stream_id AND substr(x.data, 1, ${SEALED_PREFIX.length}) = ?)
         ORDER BY s.first_position`,
      )
      .all(SEALED_PREFIX) as { streamId: string; type: string; data: string }[];
    const hasKey = keys.prepare("SELECT 1 FROM arbor_data_keys WHERE key_id = ?").pluck();
    const found: HalfDeletedSession[] = [];
    for (const first of firsts) {
      const sessionId = sessionIdOfStream(first.streamId);
      if (sessionId === undefined || first.type !== "session.created" || hasKey.get(sessionId) !== undefined) continue;
      found.push({ sessionId, tenant: clearTenant(first.data) });
    }
    return found;
  } finally {
    keys.close();
    log.close();
  }
}

/** The clear `tenant` of a `session.created` (beside its ciphertext when sealed), `default` when it names none (or the envelope does not parse). */
function clearTenant(data: string): string {
  try {
    const { tenant } = JSON.parse(data) as { tenant?: unknown };
    return typeof tenant === "string" ? tenant : "default";
  } catch (error) {
    ignored("corrupt JSON of a session.created is damage, which the log check reports itself", error);
    return "default";
  }
}

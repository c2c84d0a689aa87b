/**
 * `findHalfDeletedSessions`, for `arbor doctor` (ours; `docs/privacy.md`): sessions of an encrypted SQLite log whose sealed `session.created` has no
 * row in the key file beside the log (an interrupted delete). Read-only, without the master key; a log without a key file has none.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { keyFileBeside } from "../crypto/sqlite-data-keys.ts";
import { isSealedData } from "../crypto/sealed-record.ts";
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
    const firsts = log
      .prepare(`SELECT e.stream_id AS streamId, e.type, e.data FROM streams s JOIN events e ON e.stream_id = s.stream_id AND e.version = 1 WHERE s.stream_id LIKE 'session-%' ORDER BY s.first_position`)
      .all() as { streamId: string; type: string; data: string }[];
    const hasKey = keys.prepare("SELECT 1 FROM arbor_data_keys WHERE key_id = ?").pluck();
    const found: HalfDeletedSession[] = [];
    for (const first of firsts) {
      const sessionId = sessionIdOfStream(first.streamId);
      if (sessionId === undefined || first.type !== "session.created" || !isSealedData(first.data) || hasKey.get(sessionId) !== undefined) continue;
      found.push({ sessionId, tenant: clearTenant(first.data) });
    }
    return found;
  } finally {
    keys.close();
    log.close();
  }
}

/** The clear `tenant` beside a sealed `session.created`'s ciphertext, `default` when it names none (or the envelope does not parse). */
function clearTenant(data: string): string {
  try {
    const { tenant } = JSON.parse(data) as { tenant?: unknown };
    return typeof tenant === "string" ? tenant : "default";
  } catch (error) {
    ignored("corrupt JSON of a session.created is damage, which the log check reports itself", error);
    return "default";
  }
}

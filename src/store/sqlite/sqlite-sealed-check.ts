/**
 * `checkSealedLogData`, for `arbor doctor` (ours): opens an encrypted SQLite log read-only with the master key and reads every sealed event, head,
 * context chunk, memory row and blob; each damaged session is a problem naming the file and the damaged part. Without the right key: "not verified".
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { DataKeyUnavailableError, EncryptionKeyMismatchError } from "../../core/errors.ts";
import type { EventLog } from "../event-log.ts";
import type { EncryptionOptions } from "../crypto/log-cipher.ts";
import { keyIdOfStream } from "../crypto/session-keys.ts";
import { keyFileBeside } from "../crypto/sqlite-data-keys.ts";
import { createSqliteEventLog } from "./sqlite-event-log.ts";
import { hasTables } from "./sqlite-tables.ts";

/** The outcome of {@link checkSealedLogData}. */
export interface SealedDataCheck {
  /** Sealed items found: events, session heads, context chunks, memory rows and workspace blobs (0: nothing in the log is sealed). */
  sealed: number;
  /** Sessions (and task streams) whose sealed data was read back whole. */
  verifiedStreams: number;
  /** Set when sealed data could not be verified at all (no key, another master key): why, naming what to set. Nothing was checked then. */
  unverified?: string;
  /** Sessions skipped because their data key is destroyed (a deleted session's leftover rows). */
  destroyedKeys: string[];
  /** What is damaged, each naming the file and the session (or blob). */
  problems: string[];
  /** For the line of an intact log: `; N sealed items opened and authenticated` and the sessions not checked, or "" when nothing is sealed. */
  note: string;
}

const SEALED_EVENT = `(substr(data, 1, 8) = '{"$enc":' OR (type = 'task.queued' AND instr(data, '"input":{"$enc":') > 0))`;

/** What the file holds sealed, read on a read-only connection of its own (table and column names, no content). */
function sealedInventory(path: string) {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const column = <T>(sql: string, ...tables: string[]): T[] => (hasTables(db, ...tables) ? (db.prepare(sql).all() as T[]) : []);
    return {
      streams: column<{ streamId: string; events: number }>(`SELECT stream_id AS streamId, count(*) AS events FROM events WHERE ${SEALED_EVENT} GROUP BY stream_id ORDER BY min(global_position)`, "events"),
      heads: column<{ streamId: string }>("SELECT stream_id AS streamId FROM arbor_session_heads WHERE substr(state, 1, 5) = '$enc:'", "arbor_session_heads"),
      chunks: column<{ streamId: string; count: number }>("SELECT stream_id AS streamId, count(*) AS count FROM arbor_context_chunks WHERE typeof(items) = 'blob' GROUP BY stream_id", "arbor_context_chunks"),
      memory: column<{ tenant: string; scope: string; count: number }>("SELECT tenant, scope, count(*) AS count FROM memory_entries WHERE substr(value, 1, 5) = '$enc:' GROUP BY tenant, scope", "memory_entries"),
      blobs: column<{ tenant: string; hash: string }>("SELECT tenant, hash FROM workspace_blobs WHERE substr(data, 1, 1) = x'07'", "workspace_blobs"),
      versionsOf: (streamId: string) => db.prepare("SELECT version FROM events WHERE stream_id = ? ORDER BY version").pluck().all(streamId) as number[],
      sessionOfTask: (streamId: string) => db.prepare("SELECT json_extract(data, '$.sessionId') FROM events WHERE stream_id = ? AND type = 'task.queued' AND json_valid(data) LIMIT 1").pluck().get(streamId) as string | undefined,
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Checks the sealed data of the SQLite log at `path` (see the module contract), with `encryption` (the master key) when given. Never throws for
 * damage: it reports it (at most `maxProblems`, default 50); an error opening the log is one problem.
 */
export async function checkSealedLogData(path: string, encryption: EncryptionOptions | undefined, options: { maxProblems?: number } = {}): Promise<SealedDataCheck> {
  const max = options.maxProblems ?? 50;
  const result: SealedDataCheck = { sealed: 0, verifiedStreams: 0, destroyedKeys: [], problems: [], note: "" };
  const problem = (text: string) => {
    if (result.problems.length < max) result.problems.push(`${path}: ${text}`);
  };
  let inventory: ReturnType<typeof sealedInventory>;
  try {
    inventory = sealedInventory(path);
  } catch (error) {
    problem(`its sealed data could not be listed: ${(error as Error).message}`);
    return result;
  }
  let log: EventLog | undefined;
  try {
    const { streams, heads, chunks, memory, blobs } = inventory;
    result.sealed = streams.reduce((sum, stream) => sum + stream.events, 0) + heads.length + chunks.reduce((sum, row) => sum + row.count, 0) + memory.reduce((sum, row) => sum + row.count, 0) + blobs.length;
    if (result.sealed === 0 && !existsSync(encryption?.keyFile ?? keyFileBeside(path))) return result;
    if (!encryption) {
      result.unverified = `${path} holds sealed data (${result.sealed} sealed items), which cannot be verified without its master key: set ARBOR_ENCRYPTION_KEY (and ARBOR_ENCRYPTION_PREVIOUS_KEYS during a rotation) to check it. Only the file's structure was checked.`;
      return result;
    }
    try {
      log = createSqliteEventLog({ path, readOnly: true, encryption });
      await log.headPosition();
    } catch (error) {
      if (!EncryptionKeyMismatchError.isInstance(error)) throw error;
      result.unverified = `${error.message} Its sealed data was not verified: set ARBOR_ENCRYPTION_KEY to the log's master key (ARBOR_ENCRYPTION_PREVIOUS_KEYS for older ones). Only the file's structure was checked.`;
      return result;
    }
    const opened = log;
    const owner = (streamId: string) => {
      const session = keyIdOfStream(streamId) ?? inventory.sessionOfTask(streamId);
      return session === undefined ? `stream "${streamId}"` : `session "${session}"${streamId === `session-${session}` ? "" : ` (stream "${streamId}")`}`;
    };
    /** Runs `read`; a destroyed key is noted (not this check's), anything else thrown is a problem of `what`. True when it read. */
    const attempt = async (streamId: string, what: string, read: () => unknown): Promise<boolean> => {
      if (result.destroyedKeys.includes(streamId)) return false;
      try {
        await read();
        return true;
      } catch (error) {
        if (DataKeyUnavailableError.isInstance(error) && error.details.reason === "destroyed") {
          if (!result.destroyedKeys.includes(streamId)) result.destroyedKeys.push(streamId);
        } else problem(`${owner(streamId)}: ${what}: ${(error as Error).message}`);
        return false;
      }
    };
    for (const { streamId } of streams) {
      if (result.problems.length >= max) break;
      try {
        await opened.readStream(streamId);
        result.verifiedStreams += 1;
        continue;
      } catch (error) {
        if (DataKeyUnavailableError.isInstance(error) && error.details.reason === "destroyed") {
          result.destroyedKeys.push(streamId);
          continue;
        }
      }
      // Damaged: read it one event at a time to name every version that does not read, and the first error.
      const versions = inventory.versionsOf(streamId);
      const failed: number[] = [];
      let first: Error | undefined;
      for (const version of versions) {
        await opened.readStream(streamId, { fromVersion: version, limit: 1 }).catch((error: unknown) => {
          failed.push(version);
          first ??= error as Error;
        });
      }
      problem(`${owner(streamId)}: ${failed.length} of its ${versions.length} events do not read (${rangesOf(failed)}): ${first?.message ?? "the stream does not read as a whole"}`);
    }
    const index = opened.sessionIndex;
    for (const { streamId } of heads) await attempt(streamId, "its stored head (session index) does not read", () => index?.head(streamId));
    for (const { streamId } of chunks) {
      await attempt(streamId, "a stored context chunk does not read", () => {
        for (const chunk of index?.contextChunks?.(streamId, 0, Number.MAX_SAFE_INTEGER) ?? []) chunk.text();
      });
    }
    for (const { tenant, scope } of memory) await attempt(scope, "its memory rows do not read", () => opened.memoryIndex?.list(tenant, scope));
    for (const { tenant, hash } of blobs) {
      await opened.workspaceBlobs?.get(tenant, hash).catch((error: unknown) => problem(`workspace blob ${hash} of tenant "${tenant}": ${(error as Error).message}`));
    }
  } catch (error) {
    problem(`its sealed data could not be checked: ${(error as Error).message}`);
  } finally {
    inventory.close();
    await log?.close();
  }
  if (result.sealed > 0) result.note = `; ${result.sealed} sealed items opened and authenticated`;
  if (result.destroyedKeys.length > 0) result.note += `; not checked, their data keys destroyed (deleted sessions' leftover rows): ${result.destroyedKeys.join(", ")}`;
  return result;
}

/** `3, 5-9, 12` for sorted versions. */
function rangesOf(versions: readonly number[]): string {
  const parts: string[] = [];
  for (let index = 0; index < versions.length; index++) {
    const start = versions[index];
    while (index + 1 < versions.length && versions[index + 1] === versions[index] + 1) index += 1;
    parts.push(start === versions[index] ? `version ${start}` : `versions ${start}-${versions[index]}`);
  }
  return parts.join(", ");
}

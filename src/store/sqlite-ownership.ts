/**
 * Stream ownership over one SQLite file (ours): an owner row per stream, for the processes of
 * one host that share the file. Implements {@link StreamOwnership}.
 *
 * Contract:
 * - the rows live in `stream_leases (stream_id, token, owner, expires_at)` (ms since the epoch),
 *   created on the first `acquire`; a log whose file has none sees no owner;
 * - `acquire` in one `BEGIN IMMEDIATE` transaction: refused with `SessionBusyError` while the row
 *   names another live process of this host (`isOtherLiveProcess`) whose lease has not expired;
 *   otherwise the row gets the next token, this owner and now + TTL. An owner that was killed
 *   is taken over at once; one that is paused or stuck after its TTL;
 * - `renew()` extends the row by the TTL while its token is this lease's, else rejects with
 *   `LeaseLostError`; `release()` deletes the row when it is still this lease's;
 * - appends are not token-checked here: the version check of every append already refuses a
 *   writer that another process wrote after (the taker appends `run.resumed` first);
 * - `isOwnedElsewhere` is true while the row names another live process and has not expired.
 *
 * @example
 * ```ts
 * const ownership = createSqliteOwnership(db);
 * const lease = await ownership.acquire("session-a", { pid: process.pid, host: hostname() }, { ttlMs: 5_000 });
 * ```
 */
import type Database from "better-sqlite3";
import { LeaseLostError, SessionBusyError } from "../core/errors.ts";
import { isOtherLiveProcess } from "../core/process-group.ts";
import { DEFAULT_LEASE_TTL_MS, type StreamLease, type StreamOwnership } from "./stream-ownership.ts";

interface LeaseRow {
  token: number;
  owner: string;
  expires_at: number;
}

/**
 * Creates the ownership of one SQLite log's connection (see the module contract).
 *
 * @example
 * ```ts
 * const ownership = createSqliteOwnership(db);
 * ```
 */
export function createSqliteOwnership(db: Database.Database): StreamOwnership {
  const held = new Map<string, number>();
  let created = false;
  const ensureTable = () => {
    if (created) return;
    db.exec("CREATE TABLE IF NOT EXISTS stream_leases (stream_id TEXT PRIMARY KEY, token INTEGER NOT NULL, owner TEXT NOT NULL, expires_at INTEGER NOT NULL)");
    created = true;
  };
  const hasTable = () => created || db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'stream_leases'").get() !== undefined;
  const rowOf = (streamId: string) => (hasTable() ? (db.prepare("SELECT token, owner, expires_at FROM stream_leases WHERE stream_id = ?").get(streamId) as LeaseRow | undefined) : undefined);
  const ownerOf = (row: LeaseRow): unknown => {
    try {
      return JSON.parse(row.owner) as unknown;
    } catch {
      return undefined;
    }
  };
  const liveElsewhere = (streamId: string, row: LeaseRow | undefined) =>
    row !== undefined && held.get(streamId) !== row.token && row.expires_at > Date.now() && isOtherLiveProcess(ownerOf(row));

  return {
    acquire(streamId, owner = {}, options = {}) {
      const ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
      try {
        if (held.has(streamId)) {
          throw new SessionBusyError(`Stream "${streamId}" is already owned by this log (token ${held.get(streamId)}).`, { details: { streamId } });
        }
        ensureTable();
        const token = db.transaction(() => {
          const row = rowOf(streamId);
          if (liveElsewhere(streamId, row)) {
            throw new SessionBusyError(
              `Session stream "${streamId}" is owned by another live process (${row!.owner}) until its lease expires; wait for its run to finish or stop that process, then retry.`,
              { details: { streamId, owner: ownerOf(row!), token: row!.token, expiresAt: row!.expires_at } },
            );
          }
          const next = (row?.token ?? 0) + 1;
          db.prepare(
            "INSERT INTO stream_leases (stream_id, token, owner, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (stream_id) DO UPDATE SET token = excluded.token, owner = excluded.owner, expires_at = excluded.expires_at",
          ).run(streamId, next, JSON.stringify(owner), Date.now() + ttlMs);
          return next;
        }).immediate();
        held.set(streamId, token);
        return Promise.resolve(lease(streamId, token, ttlMs));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
    isOwnedElsewhere(streamId) {
      try {
        return Promise.resolve(liveElsewhere(streamId, rowOf(streamId)));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
    tokenOf(streamId) {
      return held.get(streamId);
    },
    fencesAppends: false,
  };

  function lease(streamId: string, token: number, ttlMs: number): StreamLease {
    let released = false;
    return {
      streamId,
      token,
      ttlMs,
      renew() {
        let changed: number;
        try {
          changed = released ? 0 : db.prepare("UPDATE stream_leases SET expires_at = ? WHERE stream_id = ? AND token = ?").run(Date.now() + ttlMs, streamId, token).changes;
        } catch (error) {
          return Promise.reject(error instanceof Error ? error : new Error(String(error)));
        }
        if (changed === 1) return Promise.resolve();
        return Promise.reject(
          new LeaseLostError(`The lease of stream "${streamId}" (token ${token}) is lost: ${released ? "it was released" : "the stream has a newer owner"}; another process may have taken its run over.`, {
            details: { streamId, token },
          }),
        );
      },
      release() {
        if (released) return Promise.resolve();
        released = true;
        if (held.get(streamId) === token) held.delete(streamId);
        try {
          db.prepare("DELETE FROM stream_leases WHERE stream_id = ? AND token = ?").run(streamId, token);
        } catch {
          // A closed or busy file: the row expires by itself after its TTL.
        }
        return Promise.resolve();
      },
    };
  }
}

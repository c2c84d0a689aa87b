/**
 * {@link StreamOwnership} over one SQLite file (ours): an owner row per stream in `stream_leases`, with a TTL and a heartbeat, for the processes of
 * one host. `acquire` takes the row in one `BEGIN IMMEDIATE` transaction unless another live process (pid and kernel start time) holds it unexpired;
 * `release()` expires the row but keeps it, so tokens only increase; every append to a held stream checks the token inside its own transaction
 * ({@link SqliteOwnership.appendFence}). An owner in this same process never counts as live.
 */
import type Database from "better-sqlite3";
import { LeaseLostError, SessionBusyError } from "../../core/errors.ts";
import { isOtherLiveProcess } from "../../core/process-group.ts";
import { DEFAULT_LEASE_TTL_MS, type StreamLease, type StreamOwnership } from "../log/stream-ownership.ts";
import { ignored } from "../../core/ignored.ts";
import { hasTables } from "./sqlite-tables.ts";

interface LeaseRow {
  token: number;
  owner: string;
  expires_at: number;
}

/** {@link StreamOwnership} plus the append-time token check the SQLite log runs in its transactions. */
export interface SqliteOwnership extends StreamOwnership {
  /**
   * The check an append to `streamId` runs inside its transaction, when this log holds the stream (else undefined): it throws `SessionBusyError` once
   * the row's token is no longer this log's (another process took the stream over).
   */
  appendFence(streamId: string): (() => void) | undefined;
  /** Expires the rows this log still holds (the log calls it before it closes its connection). */
  close(): void;
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** Creates the ownership of one SQLite log's connection (see the module contract). */
export function createSqliteOwnership(db: Database.Database): SqliteOwnership {
  const held = new Map<string, number>();
  let created = false;
  const ensureTable = () => {
    if (created) return;
    db.exec("CREATE TABLE IF NOT EXISTS stream_leases (stream_id TEXT PRIMARY KEY, token INTEGER NOT NULL, owner TEXT NOT NULL, expires_at INTEGER NOT NULL)");
    created = true;
  };
  const hasTable = () => {
    if (!created && hasTables(db, "stream_leases")) created = true;
    return created;
  };
  // Prepared once the table exists (a statement cannot be prepared on a missing table).
  let statements: { select: Database.Statement; upsert: Database.Statement; renew: Database.Statement; expire: Database.Statement } | undefined;
  const sql = () =>
    (statements ??= {
      select: db.prepare("SELECT token, owner, expires_at FROM stream_leases WHERE stream_id = ?"),
      upsert: db.prepare(
        "INSERT INTO stream_leases (stream_id, token, owner, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (stream_id) DO UPDATE SET token = excluded.token, owner = excluded.owner, expires_at = excluded.expires_at",
      ),
      renew: db.prepare("UPDATE stream_leases SET expires_at = ? WHERE stream_id = ? AND token = ?"),
      expire: db.prepare("UPDATE stream_leases SET expires_at = 0 WHERE stream_id = ? AND token = ?"),
    });
  const rowOf = (streamId: string) => (hasTable() ? (sql().select.get(streamId) as LeaseRow | undefined) : undefined);
  const ownerOf = (row: LeaseRow): unknown => {
    try {
      return JSON.parse(row.owner) as unknown;
    } catch {
      // A row this code did not write: an owner nobody can check, so it counts as gone.
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
        let takenAt = 0;
        const token = db
          .transaction(() => {
            const row = rowOf(streamId);
            if (liveElsewhere(streamId, row)) {
              throw new SessionBusyError(
                `Stream "${streamId}" is owned by another live process (${row!.owner}) until its lease expires; wait for its run to finish or stop that process, then retry.`,
                { details: { streamId, owner: ownerOf(row!), token: row!.token, expiresAt: row!.expires_at } },
              );
            }
            const next = (row?.token ?? 0) + 1;
            takenAt = Date.now();
            sql().upsert.run(streamId, next, JSON.stringify(owner), takenAt + ttlMs);
            return next;
          })
          .immediate();
        held.set(streamId, token);
        return Promise.resolve(lease(streamId, token, ttlMs, takenAt));
      } catch (error) {
        return Promise.reject(toError(error));
      }
    },
    isOwnedElsewhere(streamId) {
      try {
        return Promise.resolve(liveElsewhere(streamId, rowOf(streamId)));
      } catch (error) {
        return Promise.reject(toError(error));
      }
    },
    tokenOf(streamId) {
      return held.get(streamId);
    },
    appendFence(streamId) {
      const token = held.get(streamId);
      if (token === undefined) return undefined;
      return () => {
        const current = rowOf(streamId)?.token;
        if (current === token) return;
        throw new SessionBusyError(
          `This process no longer owns stream "${streamId}": ${current === undefined ? "its lease row is gone" : `another process took it over (ownership token ${current})`}. Nothing was written.`,
          { details: { streamId, fenced: true, token: current, ownToken: token } },
        );
      };
    },
    fencesAppends: false,
    close() {
      for (const [streamId, token] of held) {
        try {
          sql().expire.run(streamId, token);
        } catch (error) {
          ignored("a busy file at close: the ownership row expires after its TTL", error);
        }
      }
      held.clear();
    },
  };

  function lease(streamId: string, token: number, ttlMs: number, takenAt: number): StreamLease {
    let released = false;
    let renewedAt = takenAt;
    return {
      streamId,
      token,
      ttlMs,
      renew() {
        let changed: number;
        const sentAt = Date.now();
        try {
          changed = released ? 0 : sql().renew.run(sentAt + ttlMs, streamId, token).changes;
        } catch (error) {
          return Promise.reject(toError(error));
        }
        if (changed === 1) {
          renewedAt = sentAt;
          return Promise.resolve();
        }
        return Promise.reject(
          new LeaseLostError(`The lease of stream "${streamId}" (token ${token}) is lost: ${released ? "it was released" : "the stream has a newer owner"}; another process may have taken its run over.`, {
            details: { streamId, token },
          }),
        );
      },
      get renewedAt() {
        return renewedAt;
      },
      release() {
        if (released) return Promise.resolve();
        released = true;
        if (held.get(streamId) === token) held.delete(streamId);
        try {
          sql().expire.run(streamId, token);
        } catch (error) {
          ignored("a closed or busy file at release: the ownership row expires after its TTL, and is free once this process is gone", error);
        }
        return Promise.resolve();
      },
    };
  }
}

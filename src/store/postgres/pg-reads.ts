/**
 * The read queries of the PostgreSQL log (`pg-event-log.ts`): streams, the whole log, a subscription's pages, versions, the stream list and the
 * head. Every query goes through the log's `query` (which waits for the schema); rows are decoded to public events, upcast, and with a cipher each
 * encrypted session's key is loaded before its rows are opened. Argument errors are the shared ones of `log-prepare.ts` and `log-requests.ts`.
 */
import type pg from "pg";
import type { ListStreamsOptions, ReadAllOptions, ReadStreamOptions, StoredEvent, StreamInfo } from "../event-log.ts";
import { checkReadAllOptions, checkStreamId, type EventRecord } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { streamRange } from "../log/log-requests.ts";
import type { SubscriptionFilter } from "../log/log-subscription.ts";
import { storedTypeNames } from "../events/upcast.ts";
import type { LogCipher } from "../crypto/log-cipher.ts";

/** Runs one query once the log is ready, and returns its rows. */
export type PgQuery = <Row extends pg.QueryResultRow>(text: string, values: unknown[]) => Promise<Row[]>;

const COLUMNS = `global_position AS "globalPosition", event_id AS "eventId", stream_id AS "streamId", version, type,
  schema_version AS "schemaVersion", time, data::text AS "dataJson", metadata::text AS "metadataJson"`;

interface EventRow extends Omit<EventRecord, "globalPosition" | "version"> {
  globalPosition: string;
  version: string;
}

const toEvent = (row: EventRow): StoredEvent =>
  toStoredEvent({ ...row, globalPosition: Number(row.globalPosition), version: Number(row.version) });

/** The read queries on the schema `s` (quoted), opening sealed rows with `cipher` when the log is encrypted. */
export function createPgReads(query: PgQuery, s: string, cipher: LogCipher | undefined) {
  /** Stored rows to public events, each encrypted session's key loaded first. */
  const decodeAll = async (rows: EventRow[]): Promise<StoredEvent[]> => {
    if (!cipher) return rows.map(toEvent);
    const records = rows.map((row) => ({ ...row, globalPosition: Number(row.globalPosition), version: Number(row.version) }));
    await cipher.prepareRead(records);
    return records.map((record) => toStoredEvent(cipher.open(record)));
  };

  return {
    /** One page of a subscription: the events after `after` up to the head read in the same statement, and that head. */
    async readPage(after: number, limit: number, filter: SubscriptionFilter): Promise<{ head: number; events: StoredEvent[] }> {
      const rows = await query<EventRow & { head: string }>(
        `SELECT h.position AS head, e.* FROM ${s}.log_head h LEFT JOIN LATERAL (
           SELECT ${COLUMNS} FROM ${s}.events
           WHERE global_position > $1 AND global_position <= h.position AND ($2::text IS NULL OR stream_id = $2)
             AND ($3::text[] IS NULL OR type = ANY($3)) AND version > $4 AND ($6::text IS NULL OR tenant = $6)
           ORDER BY global_position LIMIT $5) e ON true`,
        [after, filter.streamId ?? null, filter.types ? storedTypeNames(filter.types) : null, filter.afterVersion ?? 0, limit, filter.tenant ?? null],
      );
      const head = rows.length === 0 ? 0 : Number(rows[0].head);
      return { head, events: rows[0]?.eventId === null ? [] : await decodeAll(rows) };
    },

    /** A stream's stored rows, forwards, unopened (`log.encryption.readClear`). */
    async readRecords(streamId: string): Promise<EventRecord[]> {
      checkStreamId(streamId);
      const rows = await query<EventRow>(`SELECT ${COLUMNS} FROM ${s}.events WHERE stream_id = $1 ORDER BY version`, [streamId]);
      return rows.map((row) => ({ ...row, globalPosition: Number(row.globalPosition), version: Number(row.version) }));
    },

    async readStream(streamId: string, readOptions: ReadStreamOptions): Promise<StoredEvent[]> {
      const range = streamRange(streamId, readOptions);
      const rows = await query<EventRow>(
        range.backwards
          ? `SELECT ${COLUMNS} FROM ${s}.events WHERE stream_id = $1 AND version <= $2 ORDER BY version DESC LIMIT $3`
          : `SELECT ${COLUMNS} FROM ${s}.events WHERE stream_id = $1 AND version >= $2 ORDER BY version LIMIT $3`,
        [streamId, range.fromVersion, range.limit ?? null],
      );
      return decodeAll(rows);
    },

    async readAll(readOptions: ReadAllOptions): Promise<StoredEvent[]> {
      checkReadAllOptions(readOptions);
      const rows = await query<EventRow>(
        `SELECT ${COLUMNS} FROM ${s}.events WHERE global_position > $1 AND ($2::text[] IS NULL OR type = ANY($2)) AND ($4::text IS NULL OR tenant = $4)
         ORDER BY global_position LIMIT $3`,
        [readOptions.fromPosition ?? 0, readOptions.types ? storedTypeNames(readOptions.types) : null, readOptions.limit ?? null, readOptions.tenant ?? null],
      );
      return decodeAll(rows);
    },

    async streamVersion(streamId: string): Promise<number> {
      checkStreamId(streamId);
      const rows = await query<{ version: string }>(`SELECT version FROM ${s}.streams WHERE stream_id = $1`, [streamId]);
      return rows.length === 0 ? 0 : Number(rows[0].version);
    },

    async listStreams(listOptions: ListStreamsOptions): Promise<StreamInfo[]> {
      const rows = await query<{ streamId: string; version: string; createdAt: string; updatedAt: string; tenant: string }>(
        `SELECT stream_id AS "streamId", version, created_at AS "createdAt", updated_at AS "updatedAt", tenant FROM ${s}.streams
         WHERE ($1::text IS NULL OR tenant = $1) ORDER BY first_position`,
        [listOptions.tenant ?? null],
      );
      return rows.map((row) => ({ ...row, version: Number(row.version) }));
    },

    async headPosition(): Promise<number> {
      const rows = await query<{ head: string | null }>(`SELECT max(global_position) AS head FROM ${s}.events`, []);
      return Number(rows[0]?.head ?? 0);
    },
  };
}

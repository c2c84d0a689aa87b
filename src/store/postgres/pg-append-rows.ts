/**
 * The PostgreSQL log's write function since migration 5, `append_rows` (ours): the writes of one group commit as typed arrays, one array per column
 * (the writes' kinds, streams, expected versions, fencing tokens, event counts and summaries; the events of every write, concatenated in write
 * order: ids, caller-given flags, types, schema versions, times, data, metadata; the flags and the times NULL when no event has one), and the
 * commit time. One call, one round trip, one transaction, sent as a named prepared statement ({@link appendRowsQuery}) with the arrays in binary
 * form (`pg-binary-arrays.ts`): each `data`/`metadata` text is checked once, by `json`'s receive function, where the JSON batch of `append_batch`
 * (migrations 1–3, kept for processes of the previous build) went through the JSON parser once for the argument, once for the batch's records and
 * once for each write's events. Same rules as `append_batch`: the `log_head` row lock, the fencing token, the expected version, one outcome per
 * write; a caller-given eventId already stored is looked up before the insert (none of a write's rows is written then), a generated one is a fresh
 * UUIDv7.
 */
import type { QueryConfig } from "pg";
import { SUMMARY_COLUMN_NAMES, summaryMergeSet } from "../session/session-summary-index.ts";

/**
 * The session summary merge of an append (migration 3; `session-summary-index.ts`): the append's summary (`sm`, computed by the writer) becomes the
 * row, or extends it when the row ends right before the append; a row left behind by an older writer stays behind. `stream`, `current` and `wanted`
 * are the function's variables.
 */
export const summaryOfAppend = (s: string, sm: string): string => `    IF ${sm} IS NOT NULL THEN
      INSERT INTO ${s}.session_summaries AS r (${SUMMARY_COLUMN_NAMES.join(", ")})
        SELECT stream, current + 1, current + wanted, (current = 0 AND x.starts)${SUMMARY_COLUMN_NAMES.slice(4).map((column) => `, x.${column}`).join("")}
        FROM json_populate_record(NULL::${s}.session_summaries, ${sm}) AS x
      ON CONFLICT (stream_id) DO UPDATE SET
    ${summaryMergeSet("r", "greatest")}
      WHERE r.version = excluded.from_version - 1;
    END IF;
`;

/** A delete write: the stream's events, its row and (with `summaries`) its summary row go; the outcome counts the events. */
export const deleteOfWrite = (s: string, summaries: boolean): string => `      DELETE FROM ${s}.events WHERE stream_id = stream;
      GET DIAGNOSTICS removed = ROW_COUNT;
      DELETE FROM ${s}.streams WHERE stream_id = stream;${summaries ? `
      DELETE FROM ${s}.session_summaries WHERE stream_id = stream;` : ""}
      outcomes := outcomes || json_build_object('ok', true, 'removed', removed);
      CONTINUE;
`;

/** An append of no events: its outcome is the stream's version and the position of its last event. */
export const emptyAppend = (s: string): string => `    IF wanted = 0 THEN
      outcomes := outcomes || json_build_object('ok', true, 'version', current,
        'last', coalesce((SELECT global_position FROM ${s}.events WHERE stream_id = stream AND version = current), 0));
      CONTINUE;
    END IF;
`;

/** The stream row after an append of `wanted` events at positions after `head` (with `tenant`, a new row gets `owner`). */
export const streamRowOfAppend = (s: string, tenant: boolean): string => `    IF current = 0 THEN
      INSERT INTO ${s}.streams (stream_id, version, first_position, created_at, updated_at${tenant ? ", tenant" : ""})
        VALUES (stream, wanted, head + 1, commit_time, commit_time${tenant ? ", owner" : ""});
    ELSE
      UPDATE ${s}.streams SET version = current + wanted, updated_at = commit_time WHERE stream_id = stream;
    END IF;
`;

/** The end of a call: the head row takes the last position handed out and the commit is announced on `channel`; returns the outcomes. */
export const endOfCall = (s: string, channel: string): string => `  IF head <> start_head THEN
    UPDATE ${s}.log_head SET position = head WHERE id;
    PERFORM pg_notify('${channel}', head::text);
  END IF;
  RETURN array_to_json(outcomes);
END
$fn$;
`;

/** The events of one write: the slice `lo..hi` of each per-event array, or the whole arrays when the call holds this one write. */
const rowsOfWrite = (whole: boolean): string => {
  const column = (name: string) => (whole ? name : `${name}[lo:hi]`);
  return `unnest(${["ids", "types", "schema_versions", "times", "data", "metadata"].map(column).join(", ")}) WITH ORDINALITY AS x(id, t, v, tm, d, m, ord)`;
};

/** The insert of one write's rows at positions after `head` and versions after `current`. */
const insertRows = (s: string, whole: boolean): string => `INSERT INTO ${s}.events (global_position, event_id, stream_id, version, type, schema_version, time, data, metadata, tenant)
        SELECT head + x.ord, x.id, stream, current + x.ord, x.t, x.v, coalesce(x.tm, commit_time), x.d, x.m, owner FROM ${rowsOfWrite(whole)};`;

/** The `append_rows` function (migration 5); `channel` is the schema's NOTIFY channel. */
export const APPEND_ROWS = (s: string, channel: string): string => `CREATE FUNCTION ${s}.append_rows(
  kinds text[], streams text[], expected text[], fences bigint[], counts integer[], summaries json[],
  ids text[], caller boolean[], types text[], schema_versions integer[], times text[], data json[], metadata json[], commit_time text)
RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE
  head bigint;
  start_head bigint;
  stream text;
  want text;
  current bigint;
  wanted int;
  removed int;
  owner text;
  lo int;
  hi int := 0;
  total int := coalesce(array_length(ids, 1), 0);
  known text[];
  outcomes json[] := '{}';
BEGIN
  -- The one row lock that serialises every append of the log (append_batch takes it too): positions are taken
  -- and committed in order, so a reader that sees position p sees every p' < p.
  SELECT position INTO head FROM ${s}.log_head WHERE id FOR UPDATE;
  start_head := head;
  FOR i IN 1 .. coalesce(array_length(kinds, 1), 0) LOOP
    stream := streams[i];
    wanted := counts[i];
    lo := hi + 1;
    hi := hi + wanted;
    IF kinds[i] = 'delete' THEN
${deleteOfWrite(s, true)}    END IF;
    IF fences[i] IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM ${s}.stream_owners WHERE stream_id = stream AND token = fences[i]
    ) THEN
      outcomes := outcomes || json_build_object('ok', false, 'fenced', (SELECT token FROM ${s}.stream_owners WHERE stream_id = stream));
      CONTINUE;
    END IF;
    owner := NULL;
    SELECT version, tenant INTO current, owner FROM ${s}.streams WHERE stream_id = stream;
    current := coalesce(current, 0);
    want := expected[i];
    -- The caller-given eventIds of this write that are already stored (one unique-index probe each; generated ids are fresh UUIDv7s).
    known := NULL;
    IF wanted > 0 AND true = ANY (caller[lo:hi]) THEN
      known := ARRAY(SELECT e.event_id FROM generate_series(lo, hi) AS j, LATERAL (
        SELECT event_id FROM ${s}.events WHERE event_id = ids[j]) AS e WHERE caller[j]);
    END IF;
    IF NOT (want = 'any' OR (want = 'no_stream' AND current = 0) OR (want = 'stream_exists' AND current > 0) OR want = current::text)
       OR coalesce(cardinality(known), 0) > 0 THEN
      -- A retry of a committed batch skips the version check: report its known events; the client decides retry, reuse or conflict.
      outcomes := outcomes || json_build_object('ok', false, 'actual', current, 'known', (
        SELECT json_agg(json_build_object('p', e.global_position, 'id', e.event_id, 's', e.stream_id, 'v', e.version, 't', e.type,
                                          'sv', e.schema_version, 'tm', e.time, 'd', e.data::text, 'm', e.metadata::text) ORDER BY e.version)
        FROM generate_series(lo, hi) AS j, LATERAL (SELECT * FROM ${s}.events WHERE event_id = ids[j]) AS e WHERE caller[j]));
      CONTINUE;
    END IF;
${emptyAppend(s)}    -- A new stream's tenant: data.tenant of its first event when that is a session.created or session.deleted, else default (migration 2).
    IF current = 0 THEN
      owner := CASE WHEN types[lo] IN ('session.created', 'session.deleted') THEN data[lo]->>'tenant' END;
    END IF;
    owner := coalesce(owner, 'default');
    IF lo = 1 AND hi = total THEN
      ${insertRows(s, true)}
    ELSE
      ${insertRows(s, false)}
    END IF;
${streamRowOfAppend(s, true)}${summaryOfAppend(s, "summaries[i]")}    outcomes := outcomes || json_build_object('ok', true, 'version', current + wanted, 'first', head + 1);
    head := head + wanted;
  END LOOP;
${endOfCall(s, channel)}`;

const APPEND_ROWS_CALL = (s: string): string => `SELECT ${s}.append_rows($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) AS outcomes`;

/** The named prepared statement of `append_rows` on the schema `schema` (unquoted; its name is unique per schema) with `values`. */
export function appendRowsQuery(schema: string, values: unknown[]): QueryConfig {
  return { name: `arbor_append_rows_${schema}`, text: APPEND_ROWS_CALL(`"${schema}"`), values };
}

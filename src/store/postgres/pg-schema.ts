/**
 * The PostgreSQL event log's schema and its migrations (ours; tables after Emmett's PostgreSQL event store), all in one PostgreSQL schema (default
 * `arbor`). {@link migratePostgresLog} applies the missing migrations in ONE transaction under an advisory lock on the schema name;
 * {@link checkPostgresLog} (read-only) creates nothing. A newer version, or tables without `arbor_migrations`, is `LogSchemaError`, nothing written
 * or dropped. Writes go through `append_rows` (migration 5, `pg-append-rows.ts`; `append_batch(batch json, commit_time text)` before): one call,
 * one round trip, one transaction.
 */
import type { ClientBase } from "pg";
import { InvalidArgumentError, LogSchemaError } from "../../core/errors.ts";
import { backfillPgSessionSummaries } from "./pg-summaries.ts";
import { summaryTableColumns } from "../session/session-summary-index.ts";
import { APPEND_ROWS, deleteOfWrite, emptyAppend, endOfCall, streamRowOfAppend, summaryOfAppend } from "./pg-append-rows.ts";
import { ignoreError } from "../../core/ignored.ts";

/** One versioned migration: `sql(schema)` returns the DDL for the quoted schema name. */
export interface PostgresMigration {
  version: number;
  name: string;
  sql(schema: string): string;
  /** Runs after `sql`, in the same transaction, with the quoted schema name (a backfill). */
  run?(client: ClientBase, schema: string): Promise<void>;
}

/** Quotes a validated schema name for SQL. Throws `InvalidArgumentError` for a bad name. */
export function quoteSchema(schema: string): string {
  if (typeof schema !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,47}$/.test(schema)) {
    throw new InvalidArgumentError(
      `schema must be a PostgreSQL identifier of letters, digits and _ (at most 48 characters, not starting with a digit), got ${JSON.stringify(schema)}.`,
    );
  }
  return `"${schema}"`;
}

/** The LISTEN/NOTIFY channel on which a schema's commits are announced. */
export function notifyChannel(schema: string): string {
  return `arbor_events_${schema}`;
}

/** The stored events whose eventIds the current append (`op`) gave, as JSON records. */
const knownEvents = (s: string): string => `(
  SELECT json_agg(json_build_object('p', e.global_position, 'id', e.event_id, 's', e.stream_id, 'v', e.version, 't', e.type,
                                    'sv', e.schema_version, 'tm', e.time, 'd', e.data::text, 'm', e.metadata::text) ORDER BY e.version)
  FROM ${s}.events e
  WHERE e.event_id IN (SELECT x.id FROM json_to_recordset(op.ev) AS x(id text, c boolean) WHERE x.c))`;

const VERSION_1_TABLES = (s: string): string => `
CREATE TABLE ${s}.log_head (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  position bigint NOT NULL
);
INSERT INTO ${s}.log_head (id, position) VALUES (true, 0);
CREATE TABLE ${s}.streams (
  stream_id text PRIMARY KEY,
  version bigint NOT NULL,
  first_position bigint NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE INDEX streams_first_position ON ${s}.streams (first_position);
CREATE TABLE ${s}.events (
  global_position bigint PRIMARY KEY,
  event_id text NOT NULL UNIQUE,
  stream_id text NOT NULL,
  version bigint NOT NULL,
  type text NOT NULL,
  schema_version integer NOT NULL,
  time text NOT NULL,
  data json NOT NULL,
  metadata json NOT NULL,
  UNIQUE (stream_id, version)
);
CREATE INDEX events_stream_position ON ${s}.events (stream_id, global_position);
CREATE TABLE ${s}.stream_owners (
  stream_id text PRIMARY KEY,
  token bigint NOT NULL,
  owner json NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now()
);
`;

/**
 * The tenant of an append (migration 2): an existing stream keeps its row's tenant; a new stream takes `data.tenant` of its first event when that is
 * a `session.created` or `session.deleted` (the session and its tombstone), else `default`.
 */
const TENANT_OF_APPEND = (s: string): string => `    IF current > 0 THEN
      SELECT tenant INTO owner FROM ${s}.streams WHERE stream_id = stream;
    ELSE
      SELECT CASE WHEN f.t IN ('session.created', 'session.deleted') THEN f.d->>'tenant' END INTO owner
      FROM json_to_recordset(json_build_array(op.ev->0)) AS f(t text, d json);
    END IF;
    owner := coalesce(owner, 'default');
`;

/**
 * The `append_batch` function; with `tenant` (migration 2 on) it also writes the tenant column, with `summaries` (migration 3 on) the session summary
 * rows.
 */
const APPEND_BATCH = (s: string, channel: string, tenant: boolean, summaries = false): string => `CREATE ${tenant ? "OR REPLACE " : ""}FUNCTION ${s}.append_batch(batch json, commit_time text) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE
  head bigint;
  start_head bigint;
  op record;
  stream text;
  expected text;
  current bigint;
  wanted int;
  inserted int;
  removed int;
  outcomes json[] := '{}';${tenant ? "\n  owner text;" : ""}
BEGIN
  -- The one row lock that serialises every append of the log: positions are taken
  -- and committed in order, so a reader that sees position p sees every p' < p.
  SELECT position INTO head FROM ${s}.log_head WHERE id FOR UPDATE;
  start_head := head;
  -- Each JSON value is parsed once: json_to_recordset extracts every field in one pass
  -- (a json column keeps its text verbatim), where ->> would re-parse the text per field.
  FOR op IN SELECT * FROM json_to_recordset(batch) AS b(k text, s text, e text, f bigint, n integer, ev json${summaries ? ", sm json" : ""}) LOOP
    stream := op.s;
    IF op.k = 'delete' THEN
${deleteOfWrite(s, summaries)}    END IF;
    IF op.f IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM ${s}.stream_owners WHERE stream_id = stream AND token = op.f
    ) THEN
      outcomes := outcomes || json_build_object('ok', false, 'fenced', (SELECT token FROM ${s}.stream_owners WHERE stream_id = stream));
      CONTINUE;
    END IF;
    SELECT version INTO current FROM ${s}.streams WHERE stream_id = stream;
    current := coalesce(current, 0);
    expected := op.e;
    wanted := op.n;
    IF NOT (expected = 'any' OR (expected = 'no_stream' AND current = 0) OR (expected = 'stream_exists' AND current > 0)
            OR expected = current::text) THEN
      -- A retry of a committed batch skips the version check: report its known events.
      outcomes := outcomes || json_build_object('ok', false, 'actual', current, 'known', ${knownEvents(s)});
      CONTINUE;
    END IF;
${emptyAppend(s)}${tenant ? TENANT_OF_APPEND(s) : ""}    -- Idempotency rests on the UNIQUE(event_id) constraint, not on a lookup first.
    INSERT INTO ${s}.events (global_position, event_id, stream_id, version, type, schema_version, time, data, metadata${tenant ? ", tenant" : ""})
      SELECT head + x.ord, x.id, stream, current + x.ord, x.t, x.v, coalesce(x.tm, commit_time), x.d, x.m${tenant ? ", owner" : ""}
      FROM ROWS FROM (json_to_recordset(op.ev) AS (id text, c boolean, t text, v integer, tm text, d json, m json))
           WITH ORDINALITY AS x(id, c, t, v, tm, d, m, ord)
      ON CONFLICT (event_id) DO NOTHING;
    GET DIAGNOSTICS inserted = ROW_COUNT;
    IF inserted < wanted THEN
      -- Some eventIds are known: take this append's rows back and report the known events.
      DELETE FROM ${s}.events WHERE global_position > head AND global_position <= head + wanted;
      outcomes := outcomes || json_build_object('ok', false, 'actual', current, 'known', ${knownEvents(s)});
      CONTINUE;
    END IF;
${streamRowOfAppend(s, tenant)}${summaries ? summaryOfAppend(s, "op.sm") : ""}    outcomes := outcomes || json_build_object('ok', true, 'version', current + wanted, 'first', head + 1);
    head := head + wanted;
  END LOOP;
${endOfCall(s, channel)}`;

const VERSION_1 = (s: string, channel: string): string => `${VERSION_1_TABLES(s)}${APPEND_BATCH(s, channel, false)}`;

/**
 * Migration 2: a tenant column on the shared tables, as Emmett's partitions: every stream and event row names its session's tenant (`default` for
 * streams that are not sessions and sessions that name none), backfilled from each stream's first event so an upgrade loses nothing; indexes for a
 * tenant's streams and a tenant's events in global order.
 */
const VERSION_2 = (s: string, channel: string): string => `
ALTER TABLE ${s}.streams ADD COLUMN tenant text NOT NULL DEFAULT 'default';
ALTER TABLE ${s}.events ADD COLUMN tenant text NOT NULL DEFAULT 'default';
UPDATE ${s}.streams st SET tenant = e.data->>'tenant'
  FROM ${s}.events e
  WHERE e.stream_id = st.stream_id AND e.version = 1 AND e.type IN ('session.created', 'session.deleted')
    AND e.data->>'tenant' IS NOT NULL AND e.data->>'tenant' <> 'default';
UPDATE ${s}.events e SET tenant = st.tenant FROM ${s}.streams st WHERE st.stream_id = e.stream_id AND st.tenant <> 'default';
CREATE INDEX streams_tenant ON ${s}.streams (tenant, first_position);
CREATE INDEX events_tenant_position ON ${s}.events (tenant, global_position);
${APPEND_BATCH(s, channel, true)}`;

/** Migration 3: the session summary rows (`pg-summaries.ts` backfills them). */
const VERSION_3 = (s: string, channel: string): string => `
CREATE TABLE ${s}.session_summaries (
  ${summaryTableColumns("postgres")}
);
${APPEND_BATCH(s, channel, true, true)}`;

/** Migration 4: run leases with a TTL on the stream owners (`pg-ownership.ts`): when the owner last renewed, and the backend holding its lock. */
const VERSION_4 = (s: string): string => `
ALTER TABLE ${s}.stream_owners ADD COLUMN expires_at timestamptz;
ALTER TABLE ${s}.stream_owners ADD COLUMN backend_pid integer;`;

/**
 * Migration 5: `append_rows`, the writes of a group commit as typed arrays (`pg-append-rows.ts`). `append_batch` stays for processes of the
 * previous build still running: both take the `log_head` lock, so their appends serialise.
 */
const VERSION_5 = (s: string, channel: string): string => APPEND_ROWS(s, channel);

/** Every migration this build knows, ascending. The last one's version is the current schema version. */
export const POSTGRES_LOG_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: "events, streams, head, owners, append_batch", sql: (schema) => VERSION_1(schema, notifyChannel(schema.slice(1, -1))) },
  { version: 2, name: "tenant column and indexes on streams and events", sql: (schema) => VERSION_2(schema, notifyChannel(schema.slice(1, -1))) },
  { version: 3, name: "session summary rows", sql: (schema) => VERSION_3(schema, notifyChannel(schema.slice(1, -1))), run: backfillPgSessionSummaries },
  { version: 4, name: "lease expiry and lock backend on stream owners", sql: (schema) => VERSION_4(schema) },
  { version: 5, name: "append_rows: a group commit's writes as typed arrays", sql: (schema) => VERSION_5(schema, notifyChannel(schema.slice(1, -1))) },
];

/**
 * Creates or upgrades the log's schema (see the module contract). `schema` is the unquoted name. Throws `LogSchemaError` for a newer or foreign
 * schema and rethrows a failing migration's error after rolling everything back.
 */
export async function migratePostgresLog(
  client: ClientBase,
  schema: string,
  migrations: readonly PostgresMigration[] = POSTGRES_LOG_MIGRATIONS,
): Promise<number> {
  const quoted = quoteSchema(schema);
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('arbor.migrate'), hashtext($1))", [schema]);
    const tables = await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = $1", [schema]);
    const names = new Set(tables.rows.map((row) => row.name));
    let current = 0;
    if (names.size > 0 && !names.has("arbor_migrations")) {
      throw new LogSchemaError(
        `PostgreSQL schema "${schema}" holds tables (${[...names].slice(0, 5).join(", ")}) but is not an Arbor event log; choose another schema.`,
        { details: { schema } },
      );
    }
    if (names.has("arbor_migrations")) {
      const row = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${quoted}.arbor_migrations`);
      current = row.rows[0]?.version ?? 0;
    }
    if (current > latest) {
      throw new LogSchemaError(
        `PostgreSQL schema "${schema}" is an Arbor event log of schema version ${current}, newer than this build knows (${latest}); upgrade Arbor to open it. Nothing was changed.`,
        { details: { schema, version: current, supported: latest } },
      );
    }
    if (current < latest) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${quoted}.arbor_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        await client.query(migration.sql(quoted));
        await migration.run?.(client, quoted);
        await client.query(`INSERT INTO ${quoted}.arbor_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      }
    }
    await client.query("COMMIT");
    return latest;
  } catch (error) {
    await client.query("ROLLBACK").catch(ignoreError("a failed ROLLBACK after a failed migration; the migration's error is thrown"));
    throw error;
  }
}

/**
 * Checks, creating and migrating nothing, that `schema` holds an Arbor event log at this build's version (a read-only opening). Throws
 * `LogSchemaError` naming the schema (and `where`) when it does not exist, is not an Arbor log, or is of another version.
 */
export async function checkPostgresLog(client: ClientBase, schema: string, where: string, migrations: readonly PostgresMigration[] = POSTGRES_LOG_MIGRATIONS): Promise<void> {
  const quoted = quoteSchema(schema);
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  if (exists.rows.length === 0) {
    throw new LogSchemaError(`PostgreSQL schema "${schema}" does not exist at ${where}: there is no Arbor event log there (a read-only command creates nothing). Check ARBOR_DB_SCHEMA / the schema option; the default is "arbor".`, { details: { schema, missing: true } });
  }
  const tables = await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = $1", [schema]);
  if (!tables.rows.some((row) => row.name === "arbor_migrations")) {
    throw new LogSchemaError(`PostgreSQL schema "${schema}" at ${where} is not an Arbor event log (it has no arbor_migrations table); a read-only command creates nothing. Check ARBOR_DB_SCHEMA / the schema option.`, { details: { schema } });
  }
  const row = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${quoted}.arbor_migrations`);
  const current = row.rows[0]?.version ?? 0;
  if (current !== latest) {
    throw new LogSchemaError(
      current > latest
        ? `PostgreSQL schema "${schema}" is an Arbor event log of schema version ${current}, newer than this build knows (${latest}); upgrade Arbor to open it. Nothing was changed.`
        : `PostgreSQL schema "${schema}" is an Arbor event log of schema version ${current}, older than this build's ${latest}; a read-only command does not migrate it. Open it once with a writing command (e.g. arbor run) to migrate it. Nothing was changed.`,
      { details: { schema, version: current, supported: latest } },
    );
  }
}

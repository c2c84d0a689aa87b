/**
 * Per-session summary rows kept by the log's writer (ours): what `arbor sessions` lists without folding every session, by the tree fold's rules
 * (`session-tree.ts`, pi's list fields). A summary covers versions `[fromVersion, version]`, and adjacent summaries merge ({@link mergeSummaries},
 * associative); the SQLite and PostgreSQL writers merge each append's summary into the row in the events' transaction, so a row is never wrong, at
 * worst behind. Readers fold what a row lacks ({@link summarizeEvents}), so an older or read-only log lists the same sessions, only slower.
 */
import type { AgentMessage } from "../../core/messages.ts";
import type { SessionCreatedData } from "../events/session-events.ts";
import { isEventOfType } from "../events/catalogue.ts";
import { createStatsAccumulator } from "./session-stats.ts";
import { userText } from "./session-tree.ts";
import type { SessionStats } from "../session-types.ts";

/** The summary of versions `[fromVersion, version]` of one session stream (see the module contract). */
export interface SessionSummaryRecord {
  streamId: string;
  /** First version covered (1 for a whole stream). */
  fromVersion: number;
  /** Last version covered. */
  version: number;
  /** True when `fromVersion` is 1 and that event is `session.created`. */
  starts: boolean;
  /** The latest `session.created` data in the range. */
  info?: SessionCreatedData;
  /** True when the range holds a `session_info` entry; `name` is then the latest (undefined = cleared). */
  nameSet: boolean;
  name?: string;
  /** `message` entries of any role, every branch. */
  messageCount: number;
  /** The first user message's text (non-empty). */
  firstMessage?: string;
  /** Latest user/assistant message timestamp, ms since the epoch. */
  lastActivity?: number;
  /** The session's statistics over the range (`session-stats.ts`: every branch, tokens and cost). */
  stats: SessionStats;
}

/** A summary read from a log's index (see {@link SessionSummaryIndex}). */
export type StoredSessionSummary = SessionSummaryRecord;

/** The summary rows a log keeps (SQLite schema 2, PostgreSQL schema 3); absent on logs that keep none (in-memory, older files opened read-only). */
export interface SessionSummaryIndex {
  /** Every stored row (of `tenant`'s streams, on logs with a tenant index), in no given order. */
  read(options?: { tenant?: string }): Promise<StoredSessionSummary[]>;
}

interface SummarizedEvent {
  type: string;
  data: unknown;
  /** The event's version; needed only when `events` skips some (a read filtered by type). */
  version?: number;
}

/**
 * The summary of the versions `[fromVersion, toVersion]` of `streamId`, given their `events` in version order: all of them, or (with versions) at
 * least every `session.created` and `entry.appended` among them. `toVersion` defaults to `fromVersion + events.length - 1`. Other event types leave
 * the summary as it is.
 */
export function summarizeEvents(streamId: string, events: readonly SummarizedEvent[], fromVersion: number, toVersion?: number): SessionSummaryRecord {
  const first = events[0];
  const summary: SessionSummaryRecord = {
    streamId,
    fromVersion,
    version: toVersion ?? fromVersion + events.length - 1,
    starts: fromVersion === 1 && first?.type === "session.created" && (first.version ?? 1) === 1,
    nameSet: false,
    messageCount: 0,
    stats: EMPTY_STATS,
  };
  const stats = createStatsAccumulator();
  for (const event of events) {
    if (isEventOfType(event, "session.created")) summary.info = event.data;
    else if (isEventOfType(event, "entry.appended")) {
      const entry = event.data.entry;
      foldEntry(summary, entry);
      stats.add(entry);
    }
  }
  summary.stats = stats.snapshot();
  return summary;
}

const EMPTY_STATS: SessionStats = createStatsAccumulator().snapshot();

const nullableSum = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);

/** The statistics of two adjacent ranges together. */
function addStats(a: SessionStats, b: SessionStats): SessionStats {
  const messages = { ...a.messages };
  for (const key of Object.keys(messages) as (keyof SessionStats["messages"])[]) messages[key] += b.messages[key];
  const tokens = { ...a.tokens };
  for (const key of Object.keys(tokens) as (keyof SessionStats["tokens"])[]) tokens[key] = nullableSum(a.tokens[key], b.tokens[key]);
  return {
    messages,
    toolCalls: a.toolCalls + b.toolCalls,
    tokens,
    cost: nullableSum(a.cost, b.cost),
    unknownUsageMessages: a.unknownUsageMessages + b.unknownUsageMessages,
    usageEntries: a.usageEntries + b.usageEntries,
  };
}

function foldEntry(summary: SessionSummaryRecord, entry: { type: string }): void {
  if (entry.type === "session_info") {
    summary.nameSet = true;
    summary.name = (entry as { name?: string }).name?.trim() || undefined;
  } else if (entry.type === "message") {
    const message = (entry as unknown as { message: AgentMessage }).message;
    summary.messageCount += 1;
    if (summary.firstMessage === undefined && message.role === "user") summary.firstMessage = userText(message) || undefined;
    if ((message.role === "user" || message.role === "assistant") && Number.isFinite(message.timestamp)) {
      summary.lastActivity = Math.max(summary.lastActivity ?? 0, message.timestamp);
    }
  }
}

/**
 * `earlier` followed by `later`, covering both ranges; `undefined` unless `later` is of the same stream and starts at `earlier.version + 1`.
 * Associative.
 */
export function mergeSummaries(earlier: SessionSummaryRecord, later: SessionSummaryRecord): SessionSummaryRecord | undefined {
  if (later.fromVersion !== earlier.version + 1 || later.streamId !== earlier.streamId) return undefined;
  const merged: SessionSummaryRecord = {
    streamId: earlier.streamId,
    fromVersion: earlier.fromVersion,
    version: later.version,
    starts: earlier.starts,
    nameSet: earlier.nameSet || later.nameSet,
    messageCount: earlier.messageCount + later.messageCount,
    stats: addStats(earlier.stats, later.stats),
  };
  const info = later.info ?? earlier.info;
  if (info !== undefined) merged.info = info;
  const name = later.nameSet ? later.name : earlier.name;
  if (name !== undefined) merged.name = name;
  const firstMessage = earlier.firstMessage ?? later.firstMessage;
  if (firstMessage !== undefined) merged.firstMessage = firstMessage;
  const activity = earlier.lastActivity === undefined ? later.lastActivity : later.lastActivity === undefined ? earlier.lastActivity : Math.max(earlier.lastActivity, later.lastActivity);
  if (activity !== undefined) merged.lastActivity = activity;
  return merged;
}

/** The statistics columns: counts (summed) and nullable token and cost figures (summed where reported). */
const COUNT_COLUMNS = ["msg_user", "msg_assistant", "msg_tool_result", "msg_custom", "msg_other", "tool_calls", "unknown_usage", "usage_entries"] as const;
const NULLABLE_SUM_COLUMNS = ["tok_input", "tok_output", "tok_cache_read", "tok_cache_write", "tok_total", "cost"] as const;

/** Every column of a summary row, in table order. */
export const SUMMARY_COLUMN_NAMES = [
  "stream_id",
  "from_version",
  "version",
  "starts",
  "info",
  "name_set",
  "name",
  "message_count",
  "first_message",
  "last_activity",
  ...COUNT_COLUMNS,
  ...NULLABLE_SUM_COLUMNS,
] as const;

/** The columns a writer binds for one append's summary (both logs). */
export type SummaryColumns = Record<(typeof SUMMARY_COLUMN_NAMES)[number], string | number | null>;

/**
 * The `SET` list of the merge upsert (both dialects; `row` is the stored row's alias, `excluded` the append's): the later range's info and name win,
 * counts add, nullable figures add where reported, the first message and `starts` stay the earlier range's.
 */
export function summaryMergeSet(row: string, greatest: "max" | "greatest"): string {
  const nullableSumOf = (column: string) =>
    `${column} = CASE WHEN ${row}.${column} IS NULL THEN excluded.${column} WHEN excluded.${column} IS NULL THEN ${row}.${column} ELSE ${row}.${column} + excluded.${column} END`;
  return [
    "version = excluded.version",
    `info = coalesce(excluded.info, ${row}.info)`,
    `name = CASE WHEN excluded.name_set THEN excluded.name ELSE ${row}.name END`,
    `name_set = ${row}.name_set OR excluded.name_set`,
    `message_count = ${row}.message_count + excluded.message_count`,
    `first_message = coalesce(${row}.first_message, excluded.first_message)`,
    `last_activity = CASE WHEN ${row}.last_activity IS NULL THEN excluded.last_activity WHEN excluded.last_activity IS NULL THEN ${row}.last_activity ELSE ${greatest}(${row}.last_activity, excluded.last_activity) END`,
    ...COUNT_COLUMNS.map((column) => `${column} = ${row}.${column} + excluded.${column}`),
    ...NULLABLE_SUM_COLUMNS.map(nullableSumOf),
  ].join(",\n    ");
}

/** `summary` as the row columns of both logs (booleans as 0/1). */
export function summaryColumns(summary: SessionSummaryRecord): SummaryColumns {
  const { stats } = summary;
  return {
    stream_id: summary.streamId,
    from_version: summary.fromVersion,
    version: summary.version,
    starts: summary.starts ? 1 : 0,
    info: summary.info === undefined ? null : JSON.stringify(summary.info),
    name_set: summary.nameSet ? 1 : 0,
    name: summary.name ?? null,
    message_count: summary.messageCount,
    first_message: summary.firstMessage ?? null,
    last_activity: summary.lastActivity ?? null,
    msg_user: stats.messages.user,
    msg_assistant: stats.messages.assistant,
    msg_tool_result: stats.messages.toolResult,
    msg_custom: stats.messages.custom,
    msg_other: stats.messages.other,
    tool_calls: stats.toolCalls,
    unknown_usage: stats.unknownUsageMessages,
    usage_entries: stats.usageEntries,
    tok_input: stats.tokens.input,
    tok_output: stats.tokens.output,
    tok_cache_read: stats.tokens.cacheRead,
    tok_cache_write: stats.tokens.cacheWrite,
    tok_total: stats.tokens.total,
    cost: stats.cost,
  };
}

const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** A stored row (either log) as a summary. */
export function summaryOfColumns(row: SummaryColumns): SessionSummaryRecord {
  const messageCount = num(row.message_count);
  const summary: SessionSummaryRecord = {
    streamId: String(row.stream_id),
    fromVersion: num(row.from_version),
    version: num(row.version),
    starts: Boolean(row.starts),
    nameSet: Boolean(row.name_set),
    messageCount,
    stats: {
      messages: {
        user: num(row.msg_user),
        assistant: num(row.msg_assistant),
        toolResult: num(row.msg_tool_result),
        custom: num(row.msg_custom),
        other: num(row.msg_other),
        total: messageCount,
      },
      toolCalls: num(row.tool_calls),
      tokens: {
        input: numOrNull(row.tok_input),
        output: numOrNull(row.tok_output),
        cacheRead: numOrNull(row.tok_cache_read),
        cacheWrite: numOrNull(row.tok_cache_write),
        total: numOrNull(row.tok_total),
      },
      cost: numOrNull(row.cost),
      unknownUsageMessages: num(row.unknown_usage),
      usageEntries: num(row.usage_entries),
    },
  };
  if (row.info !== null) summary.info = JSON.parse(String(row.info)) as SessionCreatedData;
  if (row.name !== null) summary.name = String(row.name);
  if (row.first_message !== null) summary.firstMessage = String(row.first_message);
  if (row.last_activity !== null) summary.lastActivity = num(row.last_activity);
  return summary;
}

/** The column definitions of the summary table, for `dialect`. */
export function summaryTableColumns(dialect: "sqlite" | "postgres"): string {
  const pg = dialect === "postgres";
  const count = pg ? "bigint NOT NULL" : "INTEGER NOT NULL";
  const figure = pg ? "double precision" : "REAL";
  return [
    `stream_id ${pg ? "text" : "TEXT"} PRIMARY KEY`,
    `from_version ${count}`,
    `version ${count}`,
    `starts ${pg ? "boolean NOT NULL" : "INTEGER NOT NULL"}`,
    `info ${pg ? "text" : "TEXT"}`,
    `name_set ${pg ? "boolean NOT NULL" : "INTEGER NOT NULL"}`,
    `name ${pg ? "text" : "TEXT"}`,
    `message_count ${count}`,
    `first_message ${pg ? "text" : "TEXT"}`,
    `last_activity ${figure}`,
    ...COUNT_COLUMNS.map((column) => `${column} ${count}`),
    ...NULLABLE_SUM_COLUMNS.map((column) => `${column} ${figure}`),
  ].join(",\n  ");
}

/**
 * Group commit for the PostgreSQL event log (ours; `log-group-commit.ts` over one `append_rows` call, `pg-append-rows.ts`): the writes queued in one
 * tick go as ONE call, their columns as typed arrays, one flush in flight at a time. Each write has its own outcome (conflict, reused eventId, fenced-out owner); a failed
 * call rejects the flush with one `LogCommitError` (after a lost connection the commit may have happened: a retry with the same eventIds is a no-op).
 * Session appends carry their summary (`pg-summaries.ts`); `onCommitted` runs after the promises settled.
 */
import { ArborError, EventIdReusedError, ExpectedVersionConflictError, LogCommitError, SessionBusyError } from "../../core/errors.ts";
import type { AppendResult, ExpectedVersion } from "../event-log.ts";
import { type EventRecord, type PreparedEvent, resolveDuplicates } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { upcastStoredEvent } from "../events/upcast.ts";
import { summaryJson } from "./pg-summaries.ts";
import { boolArray, int4Array, int8Array, textArray } from "./pg-binary-arrays.ts";

/** A queued append: events already validated and serialized. */
export interface PgAppendWrite {
  kind: "append";
  streamId: string;
  events: PreparedEvent[];
  expected: ExpectedVersion;
  /** The fencing token of this process's ownership of the stream, when it owns it. */
  fence?: number;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/** A queued physical delete of one stream. */
export interface PgDeleteWrite {
  kind: "delete";
  streamId: string;
  resolve(count: number): void;
  reject(error: unknown): void;
}

/** Any queued write. */
export type PgWrite = PgAppendWrite | PgDeleteWrite;

/** One write's outcome as `append_rows` reports it. */
interface Outcome {
  ok: boolean;
  removed?: number;
  version?: number;
  first?: number;
  last?: number;
  actual?: number;
  fenced?: number | null;
  known?: KnownRecord[] | null;
}

interface KnownRecord {
  p: number;
  id: string;
  s: string;
  v: number;
  t: string;
  sv: number;
  tm: string;
  d: string;
  m: string;
}

/** Options of {@link createPgGroupWriter}. */
export interface PgGroupWriterOptions {
  /** Runs `append_rows` with `values` (its arguments, the last one `commitTime`) and returns its JSON outcomes, one per write of `writes`, in order. */
  call(values: unknown[], writes: readonly PgWrite[]): Promise<unknown[]>;
  /** Called after a flush that wrote something. */
  onCommitted(): void;
  /** False: appends carry no session summary (an encrypted log keeps none: they hold titles). Default true. */
  summaries?: boolean;
  /** Decrypts a stored record an idempotent retry is compared with (an encrypted log, `crypto/log-cipher.ts`). */
  openRecord?(record: EventRecord): EventRecord;
}

/** The writer: `enqueue` a write; `drain()` resolves when nothing is queued or in flight. */
export interface PgGroupWriter {
  enqueue(write: PgWrite): void;
  drain(): Promise<void>;
}

/**
 * The 14 arguments of `append_rows` (`pg-append-rows.ts`) for `writes`, the arrays in binary form (`pg-binary-arrays.ts`): an encrypted log's
 * sealed data where it has some, the summaries when `summaries`; the caller-given flags and the times are NULL when no event has one.
 */
function appendRowsValues(writes: readonly PgWrite[], commitTime: string, summaries: boolean): unknown[] {
  const kinds: string[] = [];
  const streams: string[] = [];
  const expected: (string | null)[] = [];
  const fences: (number | null)[] = [];
  const counts: number[] = [];
  const sums: (string | null)[] = [];
  const ids: string[] = [];
  const caller: boolean[] = [];
  const types: string[] = [];
  const versions: number[] = [];
  const times: (string | null)[] = [];
  let anyCaller = false;
  let anyTime = false;
  const data: string[] = [];
  const metadata: string[] = [];
  for (const write of writes) {
    kinds.push(write.kind);
    streams.push(write.streamId);
    if (write.kind === "delete") {
      expected.push(null);
      fences.push(null);
      counts.push(0);
      sums.push(null);
      continue;
    }
    const { events } = write;
    expected.push(String(write.expected));
    fences.push(write.fence ?? null);
    counts.push(events.length);
    sums.push((summaries ? summaryJson(write.streamId, events) : undefined) ?? null);
    for (const event of events) {
      ids.push(event.eventId);
      caller.push(event.callerEventId);
      anyCaller ||= event.callerEventId;
      types.push(event.type);
      versions.push(event.schemaVersion);
      times.push(event.time ?? null);
      anyTime ||= event.time !== undefined;
      data.push(event.storedDataJson ?? event.dataJson);
      metadata.push(event.metadataJson);
    }
  }
  return [
    textArray(kinds),
    textArray(streams),
    textArray(expected),
    int8Array(fences),
    int4Array(counts),
    textArray(sums, true),
    textArray(ids),
    anyCaller ? boolArray(caller) : null,
    textArray(types),
    int4Array(versions),
    anyTime ? textArray(times) : null,
    textArray(data, true),
    textArray(metadata, true),
    commitTime,
  ];
}

function settleAppend(write: PgAppendWrite, outcome: Outcome, commitTime: string, openRecord: (record: EventRecord) => EventRecord): boolean {
  const { streamId, events } = write;
  if (outcome.ok) {
    const version = Number(outcome.version);
    if (events.length === 0) {
      write.resolve({ streamId, nextExpectedVersion: version, events: [], lastGlobalPosition: Number(outcome.last ?? 0), duplicate: false });
      return false;
    }
    const first = Number(outcome.first);
    const base = version - events.length;
    // The validated data and metadata as the SQLite log returns them (its text was written from them: no JSON.parse back).
    const stored = events.map((event, index) =>
      upcastStoredEvent({
        globalPosition: first + index,
        eventId: event.eventId,
        streamId,
        version: base + index + 1,
        type: event.type,
        schemaVersion: event.schemaVersion,
        time: event.time ?? commitTime,
        data: event.data,
        metadata: event.metadata,
      }),
    );
    write.resolve({ streamId, nextExpectedVersion: version, events: stored, lastGlobalPosition: first + events.length - 1, duplicate: false });
    return true;
  }
  if (outcome.fenced !== undefined) {
    write.reject(
      new SessionBusyError(
        `This process no longer owns stream "${streamId}": another process took it over (ownership token ${String(outcome.fenced)}). Nothing was written.`,
        { details: { streamId, fenced: true, token: outcome.fenced, ownToken: write.fence } },
      ),
    );
    return false;
  }
  const known = new Map<string, EventRecord>();
  for (const record of outcome.known ?? []) {
    known.set(record.id, openRecord({
      globalPosition: Number(record.p),
      eventId: record.id,
      streamId: record.s,
      version: Number(record.v),
      type: record.t,
      schemaVersion: record.sv,
      time: record.tm,
      dataJson: record.d,
      metadataJson: record.m,
    }));
  }
  const duplicates = resolveDuplicates(streamId, events, (eventId) => known.get(eventId), (message, details) => new EventIdReusedError(message, { details }));
  if (duplicates === undefined) throw new ExpectedVersionConflictError(streamId, write.expected, Number(outcome.actual));
  const stored = duplicates.map(toStoredEvent);
  const last = stored[stored.length - 1];
  write.resolve({ streamId, nextExpectedVersion: last.version, events: stored, lastGlobalPosition: last.globalPosition, duplicate: true });
  return false;
}

/** Creates the group-commit writer of one PostgreSQL log (see the module contract). */
export function createPgGroupWriter(options: PgGroupWriterOptions): PgGroupWriter {
  let queue: PgWrite[] = [];
  let inFlight: Promise<void> | undefined;
  let scheduled = false;
  const summaries = options.summaries !== false;
  const openRecord = options.openRecord ?? ((record: EventRecord) => record);

  const flush = async (): Promise<void> => {
    const writes = queue;
    queue = [];
    if (writes.length === 0) return;
    const commitTime = new Date().toISOString();
    let outcomes: Outcome[];
    try {
      outcomes = (await options.call(appendRowsValues(writes, commitTime, summaries), writes)) as Outcome[];
      if (!Array.isArray(outcomes) || outcomes.length !== writes.length) throw new Error("append_rows returned a malformed outcome list");
    } catch (error) {
      // An open failure (newer schema, unreachable database) is already an ArborError: pass it on.
      const failure = ArborError.isInstance(error) ? error : new LogCommitError(`The PostgreSQL event log could not commit ${writes.length} write(s): ${(error as Error).message}.`, {
        cause: error,
      });
      for (const write of writes) write.reject(failure);
      return;
    }
    let wrote = false;
    writes.forEach((write, index) => {
      const outcome = outcomes[index];
      try {
        if (write.kind === "delete") {
          const removed = Number(outcome.removed ?? 0);
          if (removed > 0) wrote = true;
          write.resolve(removed);
        } else if (settleAppend(write, outcome, commitTime, openRecord)) {
          wrote = true;
        }
      } catch (error) {
        write.reject(error);
      }
    });
    if (wrote) options.onCommitted();
  };

  const run = (): void => {
    scheduled = false;
    if (inFlight || queue.length === 0) return;
    inFlight = flush().finally(() => {
      inFlight = undefined;
      run();
    });
  };

  return {
    enqueue(write) {
      queue.push(write);
      if (scheduled || inFlight) return;
      scheduled = true;
      queueMicrotask(run);
    },
    async drain() {
      while (inFlight || queue.length > 0) {
        if (!inFlight) run();
        await inFlight;
      }
    },
  };
}

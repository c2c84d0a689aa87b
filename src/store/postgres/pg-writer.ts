/**
 * Group commit for the PostgreSQL event log (ours; `log-group-commit.ts` over one `append_batch` call): the writes queued in one tick go as ONE
 * `SELECT append_batch($1, $2)`, one flush in flight at a time. Each write has its own outcome (conflict, reused eventId, fenced-out owner); a failed
 * call rejects the flush with one `LogCommitError` (after a lost connection the commit may have happened: a retry with the same eventIds is a no-op).
 * Session appends carry their summary (`pg-summaries.ts`); `onCommitted` runs after the promises settled.
 */
import { ArborError, EventIdReusedError, ExpectedVersionConflictError, LogCommitError, SessionBusyError } from "../../core/errors.ts";
import type { AppendResult, ExpectedVersion } from "../event-log.ts";
import { type EventRecord, type PreparedEvent, resolveDuplicates } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { summaryJson } from "./pg-summaries.ts";

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

/** One write's outcome as `append_batch` reports it. */
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
  /** Runs `append_batch(batch, commitTime)` and returns its JSON outcomes, one per write (`writes`: the writes of `batchJson`, in order). */
  call(batchJson: string, commitTime: string, writes: readonly PgWrite[]): Promise<unknown[]>;
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

/** The JSON text of one write, as `append_batch` reads it (`data`/`metadata` embedded verbatim; an encrypted log's sealed data). */
function writeJson(write: PgWrite, summaries: boolean): string {
  const stream = JSON.stringify(write.streamId);
  if (write.kind === "delete") return `{"k":"delete","s":${stream}}`;
  const events = write.events.map(
    (event) =>
      `{"id":${JSON.stringify(event.eventId)},"c":${event.callerEventId},"t":${JSON.stringify(event.type)},"v":${event.schemaVersion},` +
      `${event.time === undefined ? "" : `"tm":${JSON.stringify(event.time)},`}"d":${event.storedDataJson ?? event.dataJson},"m":${event.metadataJson}}`,
  );
  const fence = write.fence === undefined ? "" : `,"f":${write.fence}`;
  const summary = summaries ? summaryJson(write.streamId, write.events) : undefined;
  const sm = summary === undefined ? "" : `,"sm":${summary}`;
  return `{"k":"append","s":${stream},"e":${JSON.stringify(String(write.expected))}${fence}${sm},"n":${events.length},"ev":[${events.join(",")}]}`;
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
    const stored = events.map((event, index) =>
      toStoredEvent({
        globalPosition: first + index,
        eventId: event.eventId,
        streamId,
        version: base + index + 1,
        type: event.type,
        schemaVersion: event.schemaVersion,
        time: event.time ?? commitTime,
        dataJson: event.dataJson,
        metadataJson: event.metadataJson,
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
      outcomes = (await options.call(`[${writes.map((write) => writeJson(write, summaries)).join(",")}]`, commitTime, writes)) as Outcome[];
      if (!Array.isArray(outcomes) || outcomes.length !== writes.length) throw new Error("append_batch returned a malformed outcome list");
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

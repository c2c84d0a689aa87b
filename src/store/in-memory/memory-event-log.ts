/**
 * The in-memory event log (ours): the shared guarantees of `event-log.ts`, nothing persisted; for tests, previews and short-lived sessions. Appends
 * apply synchronously at the call, all or nothing; events are stored as JSON text and parsed on every read, so callers can never mutate the log;
 * subscribers wake a microtask after each append; positions are never reused; after `close()` everything rejects with `LogClosedError`.
 */
import { createBlobStore, createMemoryBlobRows } from "../workspace/blob-store.ts";
import { createInMemoryMemoryIndex } from "../memory/memory-index.ts";
import { EventIdReusedError, LogClosedError } from "../../core/errors.ts";
import type { AppendOptions, AppendResult, EventLog, ListStreamsOptions, NewEvent, ReadAllOptions, ReadStreamOptions, StoredEvent, StreamInfo } from "../event-log.ts";
import { createDefaultEventRegistry } from "../events/index.ts";
import type { EventRegistry } from "../events/registry.ts";
import { checkExpectedVersion, checkReadAllOptions, checkStreamId, type EventRecord, resolveDuplicates, refuseTenantFilter } from "../log/log-prepare.ts";
import { toStoredEvent } from "../log/log-decode.ts";
import { prepareAppend, streamRange } from "../log/log-requests.ts";
import { endedKeptMessages, resolveDeltaRetention, type DeltaRetention } from "../log/delta-retention.ts";
import type { DroppedDeltas } from "../log/delta-retention.ts";
import { closeListeners, type CommitListener, type SubscriptionFilter, syncSubscriptionMethods } from "../log/log-subscription.ts";

/** Options of {@link createMemoryEventLog}. */
export interface MemoryEventLogOptions {
  /** Event schemas to validate against; default `createDefaultEventRegistry()`. */
  registry?: EventRegistry;
  /** Drop the stored deltas of ended, kept messages (`delta-retention.ts`); default keep. */
  retention?: DeltaRetention;
}

interface MemoryStream {
  /** Ascending versions; with `endedMessageDeltas: "delete"` versions may have gaps. */
  records: EventRecord[];
  /** The last version appended (the last record's: retention never removes a stream's last event). */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * Creates an empty in-memory {@link EventLog}.
 *
 * Throws nothing; its methods reject with `InvalidArgumentError`, `EventSchemaError`, `ExpectedVersionConflictError`, `EventIdReusedError` and
 * `LogClosedError` as documented on the contract.
 *
 * @example
 * ```ts
 * const log = createMemoryEventLog({ registry: createDefaultEventRegistry().register("note.added", 1, z.object({ text: z.string() })) });
 * log.subscribe({ fromPosition: 0 }).subscribe((event) => console.log(event.type));
 * ```
 */
export function createMemoryEventLog(options: MemoryEventLogOptions = {}): EventLog {
  const registry = options.registry ?? createDefaultEventRegistry();
  const retention = resolveDeltaRetention(options.retention);
  /** Every event, ascending global position. */
  let all: EventRecord[] = [];
  const byEventId = new Map<string, EventRecord>();
  const streams = new Map<string, MemoryStream>();
  const listeners = new Set<CommitListener>();
  let lastPosition = 0;
  let closed = false;

  const ensureOpen = (operation: string): void => {
    if (closed) throw new LogClosedError(`The in-memory event log is closed; cannot ${operation}.`);
  };
  const head = (): number => (all.length === 0 ? 0 : all[all.length - 1].globalPosition);
  const wakeAll = (): void => {
    for (const listener of listeners) listener.wake();
  };
  /** Index of the first record of `records` (ascending positions) with globalPosition > position. */
  const firstAfter = (records: readonly EventRecord[], position: number): number => {
    let low = 0;
    let high = records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (records[middle].globalPosition <= position) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const matches = (record: EventRecord, filter: SubscriptionFilter): boolean =>
    (filter.streamId === undefined || record.streamId === filter.streamId) &&
    (filter.types === undefined || filter.types.includes(record.type)) &&
    (filter.afterVersion === undefined || record.version > filter.afterVersion);
  const readRange = (after: number, upTo: number, limit: number, filter: SubscriptionFilter): StoredEvent[] => {
    const out: StoredEvent[] = [];
    const records = filter.streamId === undefined ? all : streams.get(filter.streamId)?.records;
    if (!records) return out;
    for (let index = firstAfter(records, after); index < records.length && out.length < limit; index++) {
      const record = records[index];
      if (record.globalPosition > upTo) break;
      if (matches(record, filter)) out.push(toStoredEvent(record));
    }
    return out;
  };

  /** Index of the first record of `records` (ascending versions) with version ≥ `version`. */
  const firstFrom = (records: readonly EventRecord[], version: number): number => {
    let low = 0;
    let high = records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (records[middle].version < version) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  /**
   * Deletes the `message.delta` records of one ended, kept message: those after the message's `message.started` (searched back from the stream's
   * end), in the stream and in `all`.
   */
  const deleteDeltas = (stream: MemoryStream, messageId: string, report: (saved: DroppedDeltas) => void): void => {
    const records = stream.records;
    const messageOf = (record: EventRecord): string | undefined => (JSON.parse(record.dataJson) as { messageId?: string }).messageId;
    let start = records.length - 1;
    while (start >= 0 && !(records[start].type === "message.started" && messageOf(records[start]) === messageId)) start--;
    if (start < 0) return;
    const removed = new Set<string>();
    let bytes = 0;
    const kept = records.slice(0, start + 1);
    for (let index = start + 1; index < records.length; index++) {
      const record = records[index];
      const data = record.type === "message.delta" ? (JSON.parse(record.dataJson) as { messageId?: string; delta?: string }) : undefined;
      if (data === undefined || data.messageId !== messageId) {
        kept.push(record);
        continue;
      }
      removed.add(record.eventId);
      bytes += Buffer.byteLength(data.delta ?? "", "utf8");
      byEventId.delete(record.eventId);
    }
    if (removed.size === 0) return;
    stream.records = kept;
    const from = firstAfter(all, records[start].globalPosition);
    all = [...all.slice(0, from), ...all.slice(from).filter((record) => !removed.has(record.eventId))];
    report({ messageId, events: removed.size, bytes });
  };

  /** Empties the stored deltas of one ended, kept message (records are replaced, never mutated: reads already returned stay as they were). */
  const dropDeltas = (records: EventRecord[], messageId: string, report: (saved: DroppedDeltas) => void): void => {
    let events = 0;
    let bytes = 0;
    for (let index = 0; index < records.length; index++) {
      const record = records[index];
      if (record.type !== "message.delta") continue;
      const data = JSON.parse(record.dataJson) as { messageId?: string; delta?: string };
      if (data.messageId !== messageId || !data.delta) continue;
      events += 1;
      bytes += Buffer.byteLength(data.delta, "utf8");
      const emptied: EventRecord = { ...record, dataJson: JSON.stringify({ ...data, delta: "" }) };
      records[index] = emptied;
      all[firstAfter(all, record.globalPosition - 1)] = emptied;
      byEventId.set(record.eventId, emptied);
    }
    if (events > 0) report({ messageId, events, bytes });
  };

  const log: EventLog = {
    workspaceBlobs: createBlobStore(createMemoryBlobRows()),
    memoryIndex: createInMemoryMemoryIndex(),
    async append(streamId: string, events: readonly NewEvent[], appendOptions: AppendOptions = {}): Promise<AppendResult> {
      ensureOpen("append");
      const { expected, prepared } = prepareAppend(registry, streamId, events, appendOptions);
      const duplicates = resolveDuplicates(streamId, prepared, (eventId) => byEventId.get(eventId), reusedError);
      if (duplicates) {
        const stored = duplicates.map(toStoredEvent);
        const last = stored[stored.length - 1];
        return { streamId, nextExpectedVersion: last.version, events: stored, lastGlobalPosition: last.globalPosition, duplicate: true };
      }
      const stream = streams.get(streamId);
      const current = stream?.version ?? 0;
      checkExpectedVersion(streamId, expected, current);
      if (prepared.length === 0) {
        const lastRecord = stream?.records[stream.records.length - 1];
        return { streamId, nextExpectedVersion: current, events: [], lastGlobalPosition: lastRecord?.globalPosition ?? 0, duplicate: false };
      }
      const now = new Date().toISOString();
      const target = stream ?? { records: [], version: 0, createdAt: now, updatedAt: now };
      const records = prepared.map((event, index): EventRecord => ({
        globalPosition: ++lastPosition,
        eventId: event.eventId,
        streamId,
        version: current + index + 1,
        type: event.type,
        schemaVersion: event.schemaVersion,
        time: event.time ?? now,
        dataJson: event.dataJson,
        metadataJson: event.metadataJson,
      }));
      for (const record of records) {
        target.records.push(record);
        all.push(record);
        byEventId.set(record.eventId, record);
      }
      target.version = current + records.length;
      target.updatedAt = now;
      if (!stream) streams.set(streamId, target);
      if (retention) {
        for (const messageId of endedKeptMessages(prepared)) {
          if (retention.mode === "delete") deleteDeltas(target, messageId, retention.report);
          else dropDeltas(target.records, messageId, retention.report);
        }
      }
      wakeAll();
      const stored = records.map(toStoredEvent);
      return {
        streamId,
        nextExpectedVersion: current + records.length,
        events: stored,
        lastGlobalPosition: records[records.length - 1].globalPosition,
        duplicate: false,
      };
    },

    async readStream(streamId: string, readOptions: ReadStreamOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readStream");
      const range = streamRange(streamId, readOptions);
      const records = streams.get(streamId)?.records ?? [];
      const limit = range.limit ?? Number.MAX_SAFE_INTEGER;
      const out: StoredEvent[] = [];
      if (range.backwards) {
        const start = firstFrom(records, range.fromVersion + 1);
        for (let index = start - 1; index >= 0 && out.length < limit; index--) out.push(toStoredEvent(records[index]));
      } else {
        for (let index = firstFrom(records, range.fromVersion); index < records.length && out.length < limit; index++) {
          out.push(toStoredEvent(records[index]));
        }
      }
      return out;
    },

    async readAll(readOptions: ReadAllOptions = {}): Promise<StoredEvent[]> {
      ensureOpen("readAll");
      checkReadAllOptions(readOptions);
      refuseTenantFilter("readAll", readOptions);
      return readRange(readOptions.fromPosition ?? 0, Number.MAX_SAFE_INTEGER, readOptions.limit ?? Number.MAX_SAFE_INTEGER, {
        types: readOptions.types,
      });
    },

    async streamVersion(streamId: string): Promise<number> {
      ensureOpen("streamVersion");
      checkStreamId(streamId);
      return streams.get(streamId)?.version ?? 0;
    },

    async listStreams(listOptions?: ListStreamsOptions): Promise<StreamInfo[]> {
      ensureOpen("listStreams");
      refuseTenantFilter("listStreams", listOptions);
      return [...streams].map(([streamId, stream]) => ({
        streamId,
        version: stream.version,
        createdAt: stream.createdAt,
        updatedAt: stream.updatedAt,
      }));
    },

    async deleteStream(streamId: string): Promise<number> {
      ensureOpen("deleteStream");
      checkStreamId(streamId);
      const stream = streams.get(streamId);
      if (!stream) return 0;
      streams.delete(streamId);
      for (const record of stream.records) byEventId.delete(record.eventId);
      all = all.filter((record) => record.streamId !== streamId);
      return stream.records.length;
    },

    ...syncSubscriptionMethods({ listeners, head, read: readRange, ensureOpen, isClosed: () => closed }),

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      closeListeners(listeners);
    },
  };
  return log;
}

function reusedError(message: string, details: Record<string, unknown>): Error {
  return new EventIdReusedError(message, { details });
}

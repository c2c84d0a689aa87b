/**
 * `session.memory` (`docs/memory.md`): keyed JSON values of the session or its principal, logged as `memory.written`/`memory.deleted` and read from a
 * projection with full-text search. Keys `[A-Za-z0-9_.\-:]{1,256}`, values JSON up to `maxValueBytes` (64 KiB), else `InvalidArgumentError` and
 * nothing written. Reads see every committed write.
 */
import { InvalidArgumentError } from "../../core/errors.ts";
import type { EventLog, NewEvent } from "../../store/event-log.ts";
import { isEventOfType } from "../../store/events/catalogue.ts";
import { MEMORY_KEY } from "../../store/events/memory-events.ts";
import { sessionStreamId } from "../../store/events/session-events.ts";
import type { MemoryChange, MemoryIndex, MemoryRow } from "../../store/memory/memory-index.ts";
import type { SessionHandle } from "../../store/session-types.ts";

/** A memory scope: the session's own, or its principal's across sessions. */
export type MemoryScope = "session" | "principal";

/** Session-memory options (the harness's `memory`). */
export interface MemoryOptions {
  /** The principal whose memory the `principal` scope reads and writes (within the tenant). */
  principal?: string;
  /** Largest value, in UTF-8 bytes of its JSON text. Default 65,536. */
  maxValueBytes?: number;
  /** Give the model the tools `memory_read`, `memory_write` and `memory_search`. Default false. */
  tools?: boolean;
}

/**
 * A session's memory (see the module contract).
 * @example
 * await memory.write("plan", { step: 2 }, { scope: "principal" });
 */
export interface SessionMemory {
  read(key: string, options?: { scope?: MemoryScope }): Promise<unknown>;
  write(key: string, value: unknown, options?: { scope?: MemoryScope }): Promise<void>;
  delete(key: string, options?: { scope?: MemoryScope }): Promise<boolean>;
  list(options?: { prefix?: string; scope?: MemoryScope }): Promise<MemoryRow[]>;
  search(query: string, options?: { limit?: number; scope?: MemoryScope }): Promise<(MemoryRow & { score: number })[]>;
}

/** What the session memory needs of its harness session. */
export interface SessionMemoryConfig {
  session: SessionHandle;
  log: EventLog;
  options: MemoryOptions;
  /** Appends to the session's stream through its writer (resolves once committed). */
  append(events: NewEvent[]): Promise<void>;
}

const DEFAULT_MAX_VALUE = 64 * 1024;

/** The stream of a principal's memory within a tenant. */
export function principalMemoryStreamId(tenant: string, principal: string): string {
  return `memory-${encodeURIComponent(tenant)}.${encodeURIComponent(principal)}`;
}

/** Catches the projection of `streamId` up with its memory events. */
export async function catchUpMemory(log: EventLog, index: MemoryIndex, tenant: string, streamId: string): Promise<void> {
  const head = await index.head(tenant, streamId);
  const events = await log.readStream(streamId, { fromVersion: head + 1 });
  if (events.length === 0) return;
  const changes: MemoryChange[] = [];
  for (const event of events) {
    if (isEventOfType(event, "memory.written")) changes.push({ version: event.version, key: event.data.key, value: event.data.value, time: event.time });
    else if (isEventOfType(event, "memory.deleted")) changes.push({ version: event.version, key: event.data.key, deleted: true, time: event.time });
  }
  await index.apply(tenant, streamId, changes, events[events.length - 1].version);
}

/** The memory of `config.session` (see the module contract). */
export function createSessionMemory(config: SessionMemoryConfig): SessionMemory {
  const { session, log, options } = config;
  const index = log.memoryIndex;
  if (!index) throw new InvalidArgumentError("memory: this event log keeps no memory projection (use the SQLite, PostgreSQL or in-memory log).");
  const tenant = session.view.info.tenant ?? "default";
  const maxValue = options.maxValueBytes ?? DEFAULT_MAX_VALUE;
  const streamOf = (scope: MemoryScope | undefined, what: string): { streamId: string; scope: MemoryScope } => {
    if (scope === undefined || scope === "session") return { streamId: sessionStreamId(session.id), scope: "session" };
    if (scope !== "principal") throw new InvalidArgumentError(`memory.${what}(): scope must be "session" or "principal" (got ${JSON.stringify(scope)}).`);
    if (!options.principal) throw new InvalidArgumentError(`memory.${what}(): the principal scope needs the harness option memory.principal.`);
    return { streamId: principalMemoryStreamId(tenant, options.principal), scope };
  };
  const checkKey = (key: unknown, what: string): string => {
    if (typeof key !== "string" || !MEMORY_KEY.test(key)) {
      throw new InvalidArgumentError(`memory.${what}(): key ${JSON.stringify(key)} must be 1 to 256 characters of A-Z a-z 0-9 _ . - :`, { details: { key } });
    }
    return key;
  };
  const ready = async (streamId: string) => {
    await catchUpMemory(log, index, tenant, streamId);
  };
  const record = async (target: { streamId: string; scope: MemoryScope }, event: NewEvent) => {
    if (target.scope === "session") await config.append([event]);
    else await log.append(target.streamId, [event]);
    await ready(target.streamId);
  };
  const principal = options.principal ? { principal: options.principal } : {};
  return {
    async read(key, readOptions = {}) {
      const target = streamOf(readOptions.scope, "read");
      checkKey(key, "read");
      await ready(target.streamId);
      return (await index.get(tenant, target.streamId, key))?.value;
    },
    async write(key, value, writeOptions = {}) {
      const target = streamOf(writeOptions.scope, "write");
      checkKey(key, "write");
      let text: string | undefined;
      try {
        text = JSON.stringify(value);
      } catch (error) {
        throw new InvalidArgumentError(`memory.write(): the value of "${key}" is not JSON (${(error as Error).message}); nothing was written.`, { details: { key } });
      }
      if (text === undefined) throw new InvalidArgumentError(`memory.write(): the value of "${key}" is not JSON (undefined, a function or a symbol); nothing was written.`, { details: { key } });
      const bytes = Buffer.byteLength(text);
      if (bytes > maxValue) {
        throw new InvalidArgumentError(`memory.write(): the value of "${key}" is ${bytes} bytes of JSON, over the cap of ${maxValue}; nothing was written.`, { details: { key, bytes, maxValueBytes: maxValue } });
      }
      const stored = JSON.parse(text) as unknown;
      await record(target, { type: "memory.written", data: { key, scope: target.scope, ...(target.scope === "principal" ? principal : {}), value: stored } });
    },
    async delete(key, deleteOptions = {}) {
      const target = streamOf(deleteOptions.scope, "delete");
      checkKey(key, "delete");
      await ready(target.streamId);
      if (!(await index.get(tenant, target.streamId, key))) return false;
      await record(target, { type: "memory.deleted", data: { key, scope: target.scope, ...(target.scope === "principal" ? principal : {}) } });
      return true;
    },
    async list(listOptions = {}) {
      const target = streamOf(listOptions.scope, "list");
      await ready(target.streamId);
      return index.list(tenant, target.streamId, listOptions.prefix ?? "");
    },
    async search(query, searchOptions = {}) {
      const target = streamOf(searchOptions.scope, "search");
      if (typeof query !== "string") throw new InvalidArgumentError("memory.search(): query must be a string.");
      const limit = searchOptions.limit ?? 10;
      if (!Number.isInteger(limit) || limit < 1) throw new InvalidArgumentError(`memory.search(): limit must be a positive whole number (got ${JSON.stringify(limit)}).`);
      await ready(target.streamId);
      return index.search(tenant, target.streamId, query, limit);
    },
  };
}

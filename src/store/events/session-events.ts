/**
 * Events of a session stream `sessionStreamId(id)` that the tree folds (ours; entry semantics pi's): `session.created` at version 1,
 * `entry.appended` adds one entry and moves the leaf to it, `leaf.moved` moves the leaf alone (`null` = before the first root).
 */
import { z } from "zod";
import type { SessionEntry } from "../../core/entries.ts";
import { sessionEntrySchema } from "./message-schemas.ts";
import type { AuditEvent } from "./audit.ts";

/**
 * The prefix of every session stream id (`session-<id>`); {@link sessionStreamId} builds one, {@link sessionIdOfStream} reads one, and the logs' SQL
 * selects session streams by it.
 */
export const SESSION_STREAM_PREFIX = "session-";

/**
 * The stream id of a session.
 *
 * @example
 * ```ts
 * sessionStreamId("0193a…"); // "session-0193a…"
 * ```
 */
export function sessionStreamId(sessionId: string): string {
  return `${SESSION_STREAM_PREFIX}${sessionId}`;
}

/**
 * The session id of a session stream id, or undefined if it is not one.
 *
 * @example
 * ```ts
 * sessionIdOfStream("session-abc"); // "abc"
 * sessionIdOfStream("workflow-1"); // undefined
 * ```
 */
export function sessionIdOfStream(streamId: string): string | undefined {
  return streamId.startsWith(SESSION_STREAM_PREFIX) ? streamId.slice(SESSION_STREAM_PREFIX.length) : undefined;
}

/** Where a session came from when it was imported. */
export interface SessionSource {
  kind: "pi-jsonl";
  /** Absolute path of the imported file (never written). */
  path: string;
  /** pi session format version of the file before migration (1, 2 or 3). */
  version: number;
  /** The pi header's own session id. */
  originalId?: string;
  /** The pi header's other fields (pi's `parentSession` path, fields of later pi versions), written back on export. */
  header?: Record<string, unknown>;
}

/** Data of `session.created`. */
export interface SessionCreatedData {
  sessionId: string;
  cwd: string;
  /** ISO 8601. */
  createdAt: string;
  metadata?: Record<string, unknown>;
  tenant?: string;
  /** Set on forks: the session and entry this one was forked from. */
  parentSessionId?: string;
  parentEntryId?: string;
  source?: SessionSource;
}

/** The stream of a deleted session's tombstone (not a session stream: `list()` never shows it). */
export function tombstoneStreamId(sessionId: string): string {
  return `tombstone-${sessionId}`;
}

/**
 * Data of `session.deleted`, the content-free tombstone `repository.delete(id)` leaves in the stream {@link tombstoneStreamId} (ours): who, when, how
 * much, and which global positions went, so the global order has no unexplained hole. Never any message content.
 */
export interface SessionDeletedData {
  sessionId: string;
  /** The session's tenant (`default` when it had none). */
  tenant: string;
  /** ISO 8601: the session's creation, its last event, the deletion. */
  createdAt: string;
  lastEventAt: string;
  deletedAt: string;
  /** Events removed, and how many of them were entries / message entries. */
  eventCount: number;
  entryCount: number;
  messageCount: number;
  /** The first and last global positions the removed events held. */
  firstGlobalPosition: number;
  lastGlobalPosition: number;
  /**
   * The session's content-free audit stream (`audit.ts`: ids, names, counts, durations, statuses, usage; never content) as it stood at the delete, in
   * log order, so it survives the delete. Absent when the session had no audit event.
   */
  audit?: AuditEvent[];
  /**
   * Present when the delete was finished after the session's data key was already destroyed (an earlier delete interrupted between destroying the key
   * and removing the rows, `docs/privacy.md`): only what was in clear went into this tombstone, so `createdAt` is the commit time of its
   * `session.created`, `messageCount` is 0 and `audit` is absent.
   */
  keyDestroyed?: true;
}

/** Data of `entry.appended`. */
export interface EntryAppendedData {
  entry: SessionEntry;
}

/** Data of `leaf.moved`. */
export interface LeafMovedData {
  leafId: string | null;
  fromLeafId: string | null;
}

/**
 * The data of `session.created` (v1): the session id, cwd, creation time (ISO 8601), optional metadata and tenant, the parent session and entry of a
 * fork, and the import source.
 *
 * @example
 * ```ts
 * const info = sessionCreatedSchema.parse(event.data);
 * ```
 */
export const sessionCreatedSchema = z.object({
  sessionId: z.string().min(1),
  cwd: z.string(),
  createdAt: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tenant: z.string().optional(),
  parentSessionId: z.string().optional(),
  parentEntryId: z.string().optional(),
  source: z
    .object({
      kind: z.literal("pi-jsonl"),
      path: z.string(),
      version: z.number().int(),
      originalId: z.string().optional(),
      header: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

/**
 * The data of `entry.appended` (v1): the appended session entry (it also becomes the leaf, as pi's append does).
 *
 * @example
 * ```ts
 * const { entry } = entryAppendedSchema.parse(event.data);
 * ```
 */
export const entryAppendedSchema = z.object({ entry: sessionEntrySchema });

/**
 * The data of `leaf.moved` (v1): the new leaf (null before the first entry) and the leaf it moved from.
 *
 * @example
 * ```ts
 * const { leafId, fromLeafId } = leafMovedSchema.parse(event.data);
 * ```
 */
export const leafMovedSchema = z.object({ leafId: z.string().nullable(), fromLeafId: z.string().nullable() });

const count = z.number().int().nonnegative();
export const sessionDeletedSchema = z
  .object({
    sessionId: z.string().min(1),
    tenant: z.string().min(1),
    createdAt: z.string(),
    lastEventAt: z.string(),
    deletedAt: z.string(),
    eventCount: count,
    entryCount: count,
    messageCount: count,
    firstGlobalPosition: count,
    lastGlobalPosition: count,
    audit: z.array(z.looseObject({ type: z.string(), sessionId: z.string(), at: z.string(), version: z.number() })).optional(),
    keyDestroyed: z.literal(true).optional(),
  })
  .strict();

/**
 * Session event types with their current schema version and schema.
 *
 * @example
 * ```ts
 * SESSION_EVENT_SCHEMAS["leaf.moved"].schema.parse({ leafId: "a1b2c3d4", fromLeafId: null });
 * ```
 */
export const SESSION_EVENT_SCHEMAS = {
  "session.created": { version: 1, schema: sessionCreatedSchema },
  "entry.appended": { version: 1, schema: entryAppendedSchema },
  "leaf.moved": { version: 1, schema: leafMovedSchema },
  "session.deleted": { version: 1, schema: sessionDeletedSchema },
} as const;

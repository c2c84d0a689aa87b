/**
 * Events of a session stream that the tree projection folds.
 *
 * Contract (ours; entry semantics are pi's):
 * - a session is one stream, `sessionStreamId(sessionId)`;
 * - `session.created` is the stream's first event (version 1);
 * - `entry.appended` adds one entry and, like pi's append, moves the leaf to it;
 * - `leaf.moved` moves the leaf without adding an entry (`null` = before the first root).
 *
 * @example
 * ```ts
 * await log.append(sessionStreamId("abc"), [{ type: "leaf.moved", data: { leafId: "e1", fromLeafId: "e9" } }]);
 * ```
 */
import { z } from "zod";
import type { SessionEntry } from "../../core/entries.ts";
import { sessionEntrySchema } from "./message-schemas.ts";

/** The stream id of a session. */
export function sessionStreamId(sessionId: string): string {
  return `session-${sessionId}`;
}

/** The session id of a session stream id, or undefined if it is not one. */
export function sessionIdOfStream(streamId: string): string | undefined {
  return streamId.startsWith("session-") ? streamId.slice("session-".length) : undefined;
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

/** Data of `entry.appended`. */
export interface EntryAppendedData {
  entry: SessionEntry;
}

/** Data of `leaf.moved`. */
export interface LeafMovedData {
  leafId: string | null;
  fromLeafId: string | null;
}

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
    })
    .optional(),
});

export const entryAppendedSchema = z.object({ entry: sessionEntrySchema });

export const leafMovedSchema = z.object({ leafId: z.string().nullable(), fromLeafId: z.string().nullable() });

/** Session event types with their current schema version and schema. */
export const SESSION_EVENT_SCHEMAS = {
  "session.created": { version: 1, schema: sessionCreatedSchema },
  "entry.appended": { version: 1, schema: entryAppendedSchema },
  "leaf.moved": { version: 1, schema: leafMovedSchema },
} as const;

/**
 * Session-memory events: a key written or deleted in a memory scope (`docs/memory.md`).
 *
 * Contract (ours; the seed's `Session.memory`, purista's key rule):
 * - keys match `[A-Za-z0-9_.\-:]{1,256}`; values are JSON;
 * - a session's memory is logged in its own stream (`scope: "session"`); a principal's memory in
 *   the stream `memory-<tenant>.<principal>` (both URI-encoded; `scope: "principal"`), shared by
 *   that principal's sessions of that tenant;
 * - the current value of each key is the projection `memory_entries` (`memory-index.ts`);
 * - `value` is content: the audit stream keeps neither it nor the key.
 *
 * @example
 * ```ts
 * if (isEventOfType(event, "memory.written")) console.log(event.data.key);
 * ```
 */
import { z } from "zod";

/** The key rule. */
export const MEMORY_KEY = /^[A-Za-z0-9_.\-:]{1,256}$/;

const common = {
  key: z.string().regex(MEMORY_KEY),
  scope: z.enum(["session", "principal"]),
  principal: z.string().min(1).optional(),
};

export const memoryWrittenSchema = z.object({ ...common, value: z.json() });
export const memoryDeletedSchema = z.object(common);

/**
 * The memory event types with their schema versions and schemas.
 *
 * @example
 * ```ts
 * MEMORY_EVENT_SCHEMAS["memory.deleted"].schema.parse({ key: "k", scope: "session" });
 * ```
 */
export const MEMORY_EVENT_SCHEMAS = {
  "memory.written": { version: 1, schema: memoryWrittenSchema },
  "memory.deleted": { version: 1, schema: memoryDeletedSchema },
} as const;

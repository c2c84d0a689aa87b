/**
 * Session-memory events (ours; `docs/memory.md`): a key (`[A-Za-z0-9_.\-:]{1,256}`) written or deleted, with a JSON value, in the session's stream
 * or the principal's `memory-<tenant>.<principal>`; `memory_entries` (`memory-index.ts`) holds the current values. Values are content.
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

/** The memory event types with their schema versions and schemas. */
export const MEMORY_EVENT_SCHEMAS = {
  "memory.written": { version: 1, schema: memoryWrittenSchema },
  "memory.deleted": { version: 1, schema: memoryDeletedSchema },
} as const;

/** The default event registry: session events plus run events, each at its current schema version. Logs created without a registry use it. */
import type { z } from "zod";
import { EVENT_CATALOGUE } from "./catalogue.ts";
import { createEventRegistry, type EventDurability, type EventRegistry } from "./registry.ts";

/**
 * Every built-in event type with its current schema version and, when it is not `"durable"`, its
 * durability class (the catalogue, untyped).
 *
 * @example
 * ```ts
 * const known = Object.keys(BUILTIN_EVENT_SCHEMAS); // ["session.created", "entry.appended", …]
 * ```
 */
export const BUILTIN_EVENT_SCHEMAS: Record<string, { version: number; schema: z.ZodType; durability?: EventDurability }> = EVENT_CATALOGUE;

/**
 * A fresh registry holding every built-in event type.
 *
 * @example
 * ```ts
 * const registry = createDefaultEventRegistry();
 * registry.register("invoice.sent", 1, z.object({ invoiceId: z.string() }));
 * ```
 */
export function createDefaultEventRegistry(): EventRegistry {
  const registry = createEventRegistry();
  for (const [type, { version, schema, durability }] of Object.entries(BUILTIN_EVENT_SCHEMAS)) {
    registry.register(type, version, schema, durability ? { durability } : undefined);
  }
  return registry;
}

export { createEventRegistry, type EventRegistry } from "./registry.ts";
export * from "./session-events.ts";
export * from "./catalogue.ts";

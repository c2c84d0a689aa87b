/**
 * Event schema registry (ours): a zod schema per type and schema version; names are dot-namespaced noun.verb, checked on registration; `validate`
 * throws `EventSchemaError` naming the type, version and field; an unknown type or version is never written. Each type has a durability class
 * (`EventDurability`, default `"durable"`: `docs/event-log.md`, "Durability classes").
 */
import type { z } from "zod";
import { EventSchemaError } from "../../core/errors.ts";
import { preservesJson } from "./json-preserving.ts";

/**
 * How soon a committed event of a type must be on stable storage (`docs/event-log.md`):
 * - `"durable"` (the default): its commit is synced before the append resolves (SQLite `synchronous=FULL` by default), so it survives a power loss.
 *   Commit-before-effect and recovery rely on these: prompts, tool calls before `execute`, results, approvals, run, agent and task endings, control
 *   events, leases and claims;
 * - `"process-crash-safe"`: a commit holding only such events is written to the log file but not synced (SQLite WAL `synchronous=NORMAL`): it
 *   survives the process being killed; a power loss may drop it, and then also every later commit, never an earlier one (the next durable commit
 *   syncs it). For token deltas, which nothing acts on.
 */
export type EventDurability = "durable" | "process-crash-safe";

/** Options of {@link EventRegistry.register}. */
export interface RegisterOptions {
  /** The type's durability class (all of its versions); default `"durable"`. */
  durability?: EventDurability;
}

const TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** A registry of event schemas keyed by type and schema version. */
export interface EventRegistry {
  /** Adds a schema. Throws `EventSchemaError` for a name that is not noun.verb. Returns the registry. */
  register(type: string, schemaVersion: number, schema: z.ZodType, options?: RegisterOptions): EventRegistry;
  /** The latest registered schema version of `type`, or undefined. */
  latestVersion(type: string): number | undefined;
  has(type: string, schemaVersion?: number): boolean;
  /** Validates and returns the parsed data. Throws `EventSchemaError`. */
  validate(type: string, schemaVersion: number, data: unknown): unknown;
  types(): string[];
  /**
   * True when the schema of `type` v`schemaVersion` cannot turn JSON input into non-JSON output (no transform, default, date…: `json-preserving.ts`),
   * so the log checks the caller's data once, not again after validation. Optional: a registry without it gets both checks. False for an unknown type
   * or version.
   */
  preservesJson?(type: string, schemaVersion: number): boolean;
  /** The durability class of `type` ({@link EventDurability}); optional: a registry without it makes every type durable. */
  durability?(type: string): EventDurability;
}

/**
 * Creates an empty registry.
 *
 * @example
 * ```ts
 * const registry = createEventRegistry();
 * registry.register("invoice.sent", 1, z.object({ invoiceId: z.string() }));
 * ```
 */
export function createEventRegistry(): EventRegistry {
  const schemas = new Map<string, Map<number, z.ZodType>>();
  const preserving = new WeakMap<z.ZodType, boolean>();
  const relaxed = new Set<string>();
  const registry: EventRegistry = {
    register(type, schemaVersion, schema, options) {
      if (!TYPE_PATTERN.test(type)) {
        throw new EventSchemaError(`Event type "${type}" is not a dot-namespaced noun.verb name (e.g. "run.started").`);
      }
      let versions = schemas.get(type);
      if (!versions) schemas.set(type, (versions = new Map()));
      versions.set(schemaVersion, schema);
      const durability = options?.durability;
      if (durability !== undefined && durability !== "durable" && durability !== "process-crash-safe") {
        throw new EventSchemaError(`Event type "${type}": durability must be "durable" or "process-crash-safe", got ${JSON.stringify(durability)}.`);
      }
      if (durability === "process-crash-safe") relaxed.add(type);
      else if (durability === "durable") relaxed.delete(type);
      return registry;
    },
    latestVersion(type) {
      const versions = schemas.get(type);
      return versions ? Math.max(...versions.keys()) : undefined;
    },
    has(type, schemaVersion) {
      const versions = schemas.get(type);
      return versions !== undefined && (schemaVersion === undefined || versions.has(schemaVersion));
    },
    validate(type, schemaVersion, data) {
      const schema = schemas.get(type)?.get(schemaVersion);
      if (!schema) {
        throw new EventSchemaError(
          schemas.has(type)
            ? `Event type "${type}" has no schema version ${schemaVersion}.`
            : `Unknown event type "${type}": register its schema before appending it.`,
          { details: { type, schemaVersion } },
        );
      }
      const result = schema.safeParse(data);
      if (!result.success) {
        const issue = result.error.issues[0];
        const where = issue?.path.length ? issue.path.join(".") : "(root)";
        throw new EventSchemaError(
          `Event "${type}" v${schemaVersion} failed its schema at ${where}: ${issue?.message ?? "invalid"}.`,
          { details: { type, schemaVersion, issues: result.error.issues } },
        );
      }
      return result.data;
    },
    types() {
      return [...schemas.keys()].sort();
    },
    preservesJson(type, schemaVersion) {
      const schema = schemas.get(type)?.get(schemaVersion);
      if (!schema) return false;
      let known = preserving.get(schema);
      if (known === undefined) preserving.set(schema, (known = preservesJson(schema)));
      return known;
    },
    durability(type) {
      return relaxed.has(type) ? "process-crash-safe" : "durable";
    },
  };
  return registry;
}

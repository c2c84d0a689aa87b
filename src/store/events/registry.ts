/**
 * Event schema registry: every logged event type has a zod schema per schema version.
 *
 * Contract (ours):
 * - type names are dot-namespaced noun.verb (`run.started`), checked on registration;
 * - `validate` throws `EventSchemaError` naming the type, version and failing field;
 * - an unknown type or version is rejected, never written.
 *
 * @example
 * ```ts
 * const registry = createEventRegistry().register("note.added", 1, z.object({ text: z.string() }));
 * registry.validate("note.added", 1, { text: "hi" });
 * ```
 */
import type { z } from "zod";
import { EventSchemaError } from "../../core/errors.ts";
import { preservesJson } from "./json-preserving.ts";

const TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** A registry of event schemas keyed by type and schema version. */
export interface EventRegistry {
  /** Adds a schema. Throws `EventSchemaError` for a name that is not noun.verb. Returns the registry. */
  register(type: string, schemaVersion: number, schema: z.ZodType): EventRegistry;
  /** The latest registered schema version of `type`, or undefined. */
  latestVersion(type: string): number | undefined;
  has(type: string, schemaVersion?: number): boolean;
  /** Validates and returns the parsed data. Throws `EventSchemaError`. */
  validate(type: string, schemaVersion: number, data: unknown): unknown;
  types(): string[];
  /**
   * True when the schema of `type` v`schemaVersion` cannot turn JSON input into non-JSON output
   * (no transform, default, date…: `json-preserving.ts`), so the log checks the caller's data once,
   * not again after validation. Optional: a registry without it gets both checks. False for an
   * unknown type or version.
   */
  preservesJson?(type: string, schemaVersion: number): boolean;
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
  const registry: EventRegistry = {
    register(type, schemaVersion, schema) {
      if (!TYPE_PATTERN.test(type)) {
        throw new EventSchemaError(`Event type "${type}" is not a dot-namespaced noun.verb name (e.g. "run.started").`);
      }
      let versions = schemas.get(type);
      if (!versions) schemas.set(type, (versions = new Map()));
      versions.set(schemaVersion, schema);
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
  };
  return registry;
}

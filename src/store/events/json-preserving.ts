/**
 * Whether a zod schema can only output JSON when its input is JSON (ours).
 *
 * Contract:
 * - true only for schemas built from kinds that copy or narrow their input and create no value of
 *   their own: string, number, boolean, null, undefined, void, never, literal, enum, template literal, any, unknown,
 *   object (shape and catchall), array, tuple, union, intersection, record, optional, nullable,
 *   readonly and lazy (followed once; a cycle is fine), with checks that only accept or reject
 *   (`refine`, `min`, `regex`…);
 * - false for anything that may make a value: transform, pipe, default, prefault, catch, date,
 *   map, set, bigint, custom, promise, function, an `overwrite` check (`trim()`, `toLowerCase()`
 *   and the like), and every kind this list does not name (a newer zod's included);
 * - so when it is true and the input was checked to be JSON, the parsed output is JSON too and
 *   needs no second check before `JSON.stringify` (`log-prepare.ts`). O(schema nodes); never throws.
 *
 * @example
 * ```ts
 * preservesJson(z.object({ text: z.string() })); // true
 * preservesJson(z.string().transform((s) => new Date(s))); // false
 * ```
 */
import type { z } from "zod";

const LEAVES = new Set(["string", "number", "boolean", "null", "undefined", "void", "never", "literal", "enum", "template_literal", "any", "unknown"]);
const WRAPPERS = new Set(["optional", "nullable", "readonly"]);

interface Def {
  type?: string;
  checks?: { _zod?: { def?: { check?: string } } }[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  getter?: () => z.ZodType;
}

function defOf(schema: unknown): Def | undefined {
  return (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;
}

/**
 * True when `schema` cannot turn JSON input into non-JSON output (see the module contract).
 *
 * @example
 * ```ts
 * if (preservesJson(schema)) json = JSON.stringify(schema.parse(checkedJsonInput));
 * ```
 */
export function preservesJson(schema: z.ZodType): boolean {
  const seen = new Set<unknown>();
  const walk = (node: unknown): boolean => {
    if (seen.has(node)) return true;
    seen.add(node);
    const def = defOf(node);
    if (!def || typeof def.type !== "string") return false;
    if (def.checks?.some((check) => check?._zod?.def?.check === "overwrite")) return false;
    const type = def.type;
    if (LEAVES.has(type)) return true;
    if (WRAPPERS.has(type)) return walk(def.innerType);
    try {
      switch (type) {
        case "object":
          return Object.values(def.shape ?? {}).every(walk) && (def.catchall === undefined || walk(def.catchall));
        case "array":
          return walk(def.element);
        case "tuple":
          return (def.items ?? []).every(walk) && (def.rest == null || walk(def.rest));
        case "union":
          return Array.isArray(def.options) && def.options.every(walk);
        case "intersection":
          return walk(def.left) && walk(def.right);
        case "record":
          return walk(def.keyType) && walk(def.valueType);
        case "lazy":
          return typeof def.getter === "function" && walk(def.getter());
        default:
          return false;
      }
    } catch {
      return false;
    }
  };
  return walk(schema);
}

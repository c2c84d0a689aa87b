/**
 * Whether a zod schema can only output JSON when its input is JSON (ours): true only for kinds that copy or narrow their input (primitives,
 * literals, objects, arrays, unions, records, optional, lazy…) with checks that only accept or reject; false for transform, pipe, default, catch,
 * date, `overwrite` checks and any kind not named. Then the parsed output needs no second check (`log-prepare.ts`). Never throws.
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

/** True when `schema` cannot turn JSON input into non-JSON output (see the module contract). */
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

/**
 * Event `data` and `metadata` as the JSON text the logs store (ours): a value `JSON.stringify` would drop or rewrite without a word (a function, a
 * symbol, a non-finite number, `undefined` in an array, a Date, Map or class instance) is refused with `EventSchemaError` naming the event's index,
 * type and the path of the value; a cycle or a bigint too. Plain JSON costs one walk and no strings. Used by `log-prepare.ts`.
 */
import { EventSchemaError } from "../../core/errors.ts";

/**
 * The first place in `value` that `JSON.stringify` would drop or change silently (a function, a symbol, a non-finite number, `undefined` in an array,
 * an object that is not plain such as a Date, Map or class instance), with what it is; undefined when `value` is JSON. An `undefined` object property
 * is allowed (it is an absent optional field). Cycles are left to `JSON.stringify`.
 */
function nonJsonAt(value: unknown, path: string, depth = 0): { path: string; what: string } | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : { path, what: `the number ${value}` };
  if (typeof value === "function") return { path, what: "a function" };
  if (typeof value === "symbol") return { path, what: "a symbol" };
  if (typeof value === "bigint") return { path, what: "a bigint" };
  if (value === undefined) return { path, what: "undefined" };
  if (depth > 200) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = nonJsonAt(value[index], `${path}[${index}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype !== Object.prototype && prototype !== null) {
    return { path, what: `a ${(value as object).constructor?.name ?? "non-plain object"} (not a plain object)` };
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item === undefined) continue;
    const found = nonJsonAt(item, /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * True when `value` holds nothing {@link nonJsonAt} would report: the same walk without building a path per key, so that the common case (JSON data)
 * costs one pass and no strings.
 */
function isPlainJson(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (depth > 200) return true;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) if (!isPlainJson(value[index], depth + 1)) return false;
    return true;
  }
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key in value as Record<string, unknown>) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined && !isPlainJson(item, depth + 1)) return false;
  }
  return true;
}

/** Refuses what JSON.stringify (or a schema stripping unknown keys) would drop or rewrite without a word. */
export function assertJson(value: unknown, index: number, type: string, field: string): void {
  if (isPlainJson(value)) return;
  const bad = nonJsonAt(value, field);
  if (bad) {
    throw new EventSchemaError(
      `events[${index}] ("${type}"): ${bad.path} is ${bad.what}, which is not JSON; nothing was appended. Pass JSON values only (strings, finite numbers, booleans, null, arrays, plain objects).`,
      { details: { index, type, field, path: bad.path } },
    );
  }
}

/** `value` as JSON text, after {@link assertJson}. */
export function toJson(value: unknown, index: number, type: string, field: string): string {
  assertJson(value, index, type, field);
  return stringify(value, index, type, field);
}

/** `JSON.stringify` of a value already checked to be JSON; a cycle or a bigint is an `EventSchemaError`. */
export function stringify(value: unknown, index: number, type: string, field: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new EventSchemaError(`events[${index}] ("${type}"): ${field} is not JSON-serializable: ${(error as Error).message}.`, {
      cause: error,
      details: { index, type, field },
    });
  }
  if (json === undefined) {
    throw new EventSchemaError(`events[${index}] ("${type}"): ${field} is not JSON (got ${describe(value)}).`, {
      details: { index, type, field },
    });
  }
  return json;
}

/** A short description of `value` for an error message (a string clipped to 60 characters). */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "object") return value === null ? "null" : Array.isArray(value) ? "an array" : "an object";
  return `${typeof value} ${String(value)}`;
}

/**
 * Upcasting: old event names and shapes become the catalogue's current ones on read; stored rows are never rewritten.
 * `upcastStoredEvent` runs in the log's one row decoder (`toStoredEvent`, `../log/log-decode.ts`), so everything above sees current names; a new
 * `EventLog` must call it on every event it reads. Type filters are widened with `storedTypeNames`; positions, ids, time and metadata are kept, and
 * a current event is returned as is.
 *
 * | stored as (v1) | read as |
 * | --- | --- |
 * | `run.finished` | `run.ended` v2, `status: "done"` |
 * | `run.failed` | `run.ended` v2, `status: "failed"` |
 * | `run.aborted` | `run.ended` v2, `status: "aborted"` |
 * | `run.interrupted` | `run.ended` v2, `status: "interrupted"` |
 * | `tool.finished` | `tool.ended` v2, same fields |
 * | `retry.finished` | `retry.ended` v2, same fields |
 * | `workflow.started` | `workflow.started` v3, same fields (no `definition`: its resume compares step ids only) |
 *
 * Later versions that only added optional fields read as the current version, with the stored data:
 *
 * | stored as | read as |
 * | --- | --- |
 * | `workflow.started` v2 | `workflow.started` v3, same fields (its steps carry no settings, its digest is form 1) |
 */
import type { StoredEvent } from "../event-log.ts";

interface Upcaster {
  type: string;
  schemaVersion: number;
  data: (data: object) => object;
}

const runEnded = (status: "done" | "failed" | "aborted" | "interrupted"): Upcaster => ({ type: "run.ended", schemaVersion: 2, data: (data) => ({ ...data, status }) });
const renamed = (type: string, schemaVersion = 2): Upcaster => ({ type, schemaVersion, data: (data) => data });

/** Old stored type (schema version 1) → its current form. */
const UPCASTERS: ReadonlyMap<string, Upcaster> = new Map([
  ["run.finished", runEnded("done")],
  ["run.failed", runEnded("failed")],
  ["run.aborted", runEnded("aborted")],
  ["run.interrupted", runEnded("interrupted")],
  ["tool.finished", renamed("tool.ended")],
  ["retry.finished", renamed("retry.ended")],
  ["workflow.started", renamed("workflow.started", 3)],
]);

/** Types whose later versions only added optional fields: stored versions below `current` read as it. */
const WIDENED: ReadonlyMap<string, { from: number; current: number }> = new Map([["workflow.started", { from: 2, current: 3 }]]);

/**
 * The event in its current name and shape (see the module contract). Never throws.
 *
 * @example
 * ```ts
 * const current = upcastStoredEvent(decodedRow);
 * ```
 */
export function upcastStoredEvent(event: StoredEvent): StoredEvent {
  const widened = event.schemaVersion > 1 ? WIDENED.get(event.type) : undefined;
  if (widened && event.schemaVersion >= widened.from && event.schemaVersion < widened.current) return { ...event, schemaVersion: widened.current };
  const upcaster = event.schemaVersion === 1 ? UPCASTERS.get(event.type) : undefined;
  if (!upcaster || typeof event.data !== "object" || event.data === null) return event;
  return { ...event, type: upcaster.type, schemaVersion: upcaster.schemaVersion, data: upcaster.data(event.data) };
}

/**
 * The stored type names to match for a read filter on `types`: the types themselves plus the old names that upcast to them.
 *
 * @example
 * ```ts
 * storedTypeNames(["run.ended"]); // ["run.ended", "run.finished", "run.failed", "run.aborted", "run.interrupted"]
 * ```
 */
export function storedTypeNames(types: readonly string[]): string[] {
  const wanted = new Set(types);
  const names = [...types];
  for (const [old, upcaster] of UPCASTERS) if (wanted.has(upcaster.type) && !wanted.has(old)) names.push(old);
  return names;
}

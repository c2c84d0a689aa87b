/**
 * Summary lifecycle events: the intent of a summary model call (a compaction or a branch
 * summary) and how it ended, logged in the session's stream.
 *
 * Contract (ours; commit-before-effect for the model calls that are not a run's):
 * - `summary.started` is committed BEFORE the summary model is called; it names the kind,
 *   the leaf the summary is prepared from and the process that owns the call
 *   (`metadata.owner`, as `run.started` does);
 * - exactly one `summary.ended` follows for the same `summaryId`: `appended` in the same
 *   atomic append as the summary entry (`entryId`), else `failed`, `cancelled`, or
 *   `interrupted` when recovery found the owner dead with no ending (nothing was appended);
 * - a summary a hook supplied (no model call) logs neither.
 *
 * @example
 * ```ts
 * session.events$().pipe(ofType("summary.ended")).subscribe((event) => console.log(event.data.kind, event.data.status));
 * ```
 */
import { z } from "zod";

/** What is being summarized: the path before a compaction's cut, or a branch left by `moveTo`. */
const summaryKind = z.enum(["compaction", "branch_summary"]);

/**
 * Data of `summary.started` (v1).
 *
 * @example
 * ```ts
 * summaryStartedSchema.parse({ summaryId: "s1", kind: "compaction", reason: "manual", fromLeafId: "a1b2c3d4" });
 * ```
 */
export const summaryStartedSchema = z.object({
  summaryId: z.string().min(1),
  kind: summaryKind,
  /** Why: a compaction's reason (`manual`, `threshold`, `overflow`), `navigation` for a branch summary. */
  reason: z.string().min(1),
  /** The leaf the summary was prepared from. */
  fromLeafId: z.string().nullable(),
});

/**
 * Data of `summary.ended` (v1).
 *
 * @example
 * ```ts
 * summaryEndedSchema.parse({ summaryId: "s1", kind: "compaction", status: "appended", entryId: "e5f6a7b8" });
 * ```
 */
export const summaryEndedSchema = z.object({
  summaryId: z.string().min(1),
  kind: summaryKind,
  status: z.enum(["appended", "failed", "cancelled", "interrupted"]),
  /** The summary entry (`appended` only). */
  entryId: z.string().optional(),
  /** Why it failed or was cancelled, in words. */
  message: z.string().optional(),
});

/**
 * Summary event types with their current schema version and schema.
 *
 * @example
 * ```ts
 * SUMMARY_EVENT_SCHEMAS["summary.started"].version; // 1
 * ```
 */
export const SUMMARY_EVENT_SCHEMAS = {
  "summary.started": { version: 1, schema: summaryStartedSchema },
  "summary.ended": { version: 1, schema: summaryEndedSchema },
} as const;

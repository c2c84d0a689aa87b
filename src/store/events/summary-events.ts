/**
 * Summary lifecycle events (ours; commit-before-effect for summary model calls), in the session's stream: `summary.started` is committed BEFORE
 * the model is called (kind, leaf, `metadata.owner`); exactly one `summary.ended` follows: `appended` with the entry, `failed`, `cancelled` or
 * `interrupted`. A summary a hook supplied logs neither.
 */
import { z } from "zod";

/** What is being summarized: the path before a compaction's cut, or a branch left by `moveTo`. */
const summaryKind = z.enum(["compaction", "branch_summary"]);

/** Data of `summary.started` (v1). */
export const summaryStartedSchema = z.object({
  summaryId: z.string().min(1),
  kind: summaryKind,
  /** Why: a compaction's reason (`manual`, `threshold`, `overflow`), `navigation` for a branch summary. */
  reason: z.string().min(1),
  /** The leaf the summary was prepared from. */
  fromLeafId: z.string().nullable(),
});

/** Data of `summary.ended` (v1). */
export const summaryEndedSchema = z.object({
  summaryId: z.string().min(1),
  kind: summaryKind,
  status: z.enum(["appended", "failed", "cancelled", "interrupted"]),
  /** The summary entry (`appended` only). */
  entryId: z.string().optional(),
  /** Why it failed or was cancelled, in words. */
  message: z.string().optional(),
});

/** Summary event types with their current schema version and schema. */
export const SUMMARY_EVENT_SCHEMAS = {
  "summary.started": { version: 1, schema: summaryStartedSchema },
  "summary.ended": { version: 1, schema: summaryEndedSchema },
} as const;

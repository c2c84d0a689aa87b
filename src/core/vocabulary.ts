/**
 * The named unions every layer shares: how runs end, how tool calls end, how approvals end, how
 * runs start, and what the log keeps of a message's deltas. Each is one `as const` list (for zod
 * enums and runtime checks) and the union derived from it; nothing else spells these members.
 */

/** How a run ended: `run.ended`'s `status`, `RunOutcome.status`. */
export const RUN_STATUSES = ["done", "failed", "aborted", "interrupted", "suspended", "budget_exceeded"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What started a run: `run.started`'s `kind`. */
export const RUN_KINDS = ["prompt", "continue", "resume"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** How a tool call ended (or why the loop wrote its result itself): `tool.ended`'s `outcome`. */
export const TOOL_OUTCOMES = ["succeeded", "failed", "aborted", "timed_out", "blocked", "invalid", "not_found", "skipped", "interrupted", "denied"] as const;
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/** A human decision on a gated call. */
export type ApprovalDecision = "approved" | "denied";

/** How an approval wait ended: `approval.ended`'s `status` (`cancelled`: an abort closed it). */
export const APPROVAL_END_STATUSES = ["approved", "denied", "cancelled"] as const satisfies readonly (ApprovalDecision | "cancelled")[];
export type ApprovalEndStatus = (typeof APPROVAL_END_STATUSES)[number];

/** Who asked for an approval: the tool's `needsApproval`, or a policy hook. */
export type ApprovalSource = "tool" | "policy";

/** What a streamed piece carries: `message.delta`'s `kind`, and the kind of a streamed content block. */
export const DELTA_KINDS = ["text", "thinking", "toolCall"] as const;
export type DeltaKind = (typeof DELTA_KINDS)[number];

/** What the log keeps of an ended message's `message.delta` events. */
export const DELTA_RETENTIONS = ["keep", "drop", "delete"] as const;
export type DeltaRetentionMode = (typeof DELTA_RETENTIONS)[number];

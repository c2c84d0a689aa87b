/**
 * The approval fold: the gated calls of a session and their status as the activity projection folds them, and the input digest an approval
 * covers. Pure; the session-level functions are in `approvals.ts`.
 */
import { createHash } from "node:crypto";
import type { StoredEvent } from "../store/event-log.ts";
import { foldActivityAll, type ApprovalRecord, type SessionActivity } from "../store/session/session-activity.ts";
import type { ApprovalDecision } from "../core/vocabulary.ts";

/** Where one gated call is. */
export type ApprovalStatus = ApprovalRecord["status"];

export type { ApprovalRecord };

/**
 * A gated call that waits (open), with its arguments from the assistant entry.
 * @example
 * for (const call of await agent.pendingApprovals()) console.log(call.toolName, call.input);
 */
export interface PendingApproval extends ApprovalRecord {
  /** The call's arguments as the model sent them (from the session's assistant entry). */
  input: Record<string, unknown>;
}

/**
 * The result of a decision.
 * @example
 * const { changed, undecided } = await agent.approve("call_1");
 */
export interface ApprovalDecisionResult {
  toolCallId: string;
  status: ApprovalDecision;
  /** False when the same decision was already recorded (nothing was written). */
  changed: boolean;
  /** Open calls of the session still without a decision, after this one. */
  undecided: string[];
}

/**
 * Folds the approvals of a session's events (see the module contract) with the activity reducer (`src/store/session/session-activity.ts`). Pure. A caller
 * holding a view reads {@link approvalsOf} of `view.activity` instead.
 * @example
 * const approvals = foldApprovals(await log.readStream(sessionStreamId(id)));
 */
export function foldApprovals(events: readonly StoredEvent[]): Map<string, ApprovalRecord> {
  return approvalsOf(foldActivityAll(events));
}

/** The approvals of an activity projection by tool call id, in request order; each record is a copy. */
export function approvalsOf(activity: SessionActivity): Map<string, ApprovalRecord> {
  return new Map(activity.approvals.map((record) => [record.toolCallId, { ...record }]));
}

/**
 * The open (unsettled) approvals, in request order.
 * @example
 * const waiting = openApprovals(foldApprovals(events)).filter((record) => record.status === "pending");
 */
export function openApprovals(approvals: ReadonlyMap<string, ApprovalRecord>): ApprovalRecord[] {
  return [...approvals.values()].filter((record) => !record.settled);
}

/**
 * Canonical JSON: object keys sorted at every level (arrays keep their order).
 * @example
 * canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * SHA-256 (hex) of the arguments' canonical JSON.
 * @example
 * inputDigest({ command: "ls" }).length; // 64
 */
export function inputDigest(args: unknown): string {
  return createHash("sha256").update(canonicalJson(args)).digest("hex");
}


/**
 * Recovery of summary intents: a `summary.started` (a compaction's or a branch summary's model
 * call) whose process died before its `summary.ended` is closed as `interrupted`.
 *
 * Contract (ours, "recovery closes an intent that never finished"):
 * - the open intents are the view's activity projection's `summaries` (`view.activity`,
 *   `src/store/session-activity.ts`): a `summary.started` with no `summary.ended` of the same
 *   `summaryId`; the stream is not read again;
 * - an open intent is closed only when its owner is gone, decided as run recovery decides it
 *   (`run-lease.ts`): through the session's stream ownership when the log has one (PostgreSQL:
 *   the intents are left alone while another process holds the session, `isOwnedElsewhere`;
 *   the session actor holds it for a compaction or navigation as for a run), otherwise by the
 *   `metadata.owner` pid check ({@link isRunOwnerAlive}: an owner on another host counts as alive);
 * - closing appends one `summary.ended { status: "interrupted" }` per intent, in one append
 *   through the session's one writer (`writes`, the session actor's), checked against the view's version; nothing else is written (no summary entry was
 *   appended, since `appended` is written in the entry's own append);
 * - rejects with the append's error and writes nothing then.
 *
 * @example
 * ```ts
 * const closed = await closeInterruptedSummaries(session); // summary ids
 * ```
 */
import type { NewEvent } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { isRunOwnerAlive } from "./run-lease.ts";
import type { SessionWrites } from "./session-slot.ts";

/** The text of an interrupted summary's ending. */
const INTERRUPTED_SUMMARY_TEXT = "The process stopped while the summary model was called; no summary was appended. Run it again (compact, or move with a summary).";

/**
 * Closes the session's open summary intents whose owner is gone; returns their summary ids.
 *
 * @example
 * ```ts
 * await closeInterruptedSummaries(session, sessionActorOf(session).writes);
 * ```
 */
export async function closeInterruptedSummaries(session: SessionHandle, writes: Pick<SessionWrites, "record">): Promise<string[]> {
  const open = session.view.activity.summaries;
  if (open.length === 0) return [];
  const ownership = session.ownership;
  const heldElsewhere = ownership ? await ownership.isOwnedElsewhere() : undefined;
  const closed = open.filter(({ owner }) => (heldElsewhere === undefined ? !isRunOwnerAlive(owner) : !heldElsewhere));
  const closing: NewEvent[] = closed.map(({ summaryId, kind }) => ({ type: "summary.ended", data: { summaryId, kind, status: "interrupted", message: INTERRUPTED_SUMMARY_TEXT } }));
  // Through the session's one writer (the caller's: the agent's, or the session actor's).
  if (closing.length > 0) await writes.record(closing);
  return closed.map(({ summaryId }) => summaryId);
}

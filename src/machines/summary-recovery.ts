/**
 * Recovery of summary intents: a `summary.started` (a compaction's or a branch summary's model
 * call) whose process died before its `summary.ended` is closed as `interrupted`.
 *
 * Contract (ours; issue 10, "recovery closes an intent that never finished"):
 * - an intent is open when its `summary.started` has no `summary.ended` with the same
 *   `summaryId`; it is closed only when its owner (`metadata.owner`) is not a live other
 *   process on this host ({@link isRunOwnerAlive}); an owner on another host counts as alive;
 * - closing appends one `summary.ended { status: "interrupted" }` per intent, in one append
 *   checked against the view's version; nothing else is written (no summary entry was
 *   appended, since `appended` is written in the entry's own append);
 * - rejects with the append's error and writes nothing then.
 *
 * @example
 * ```ts
 * const closed = await closeInterruptedSummaries(session, events); // summary ids
 * ```
 */
import type { NewEvent, StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { isRunOwnerAlive } from "./run-lease.ts";

/** The text of an interrupted summary's ending. */
const INTERRUPTED_SUMMARY_TEXT = "The process stopped while the summary model was called; no summary was appended. Run it again (compact, or move with a summary).";

/**
 * Closes the session's open summary intents whose owner is gone; returns their summary ids.
 *
 * @example
 * ```ts
 * await closeInterruptedSummaries(session, await log.readStream(sessionStreamId(session.id)));
 * ```
 */
export async function closeInterruptedSummaries(session: SessionHandle, events: readonly StoredEvent[]): Promise<string[]> {
  const open = new Map<string, { kind: "compaction" | "branch_summary"; owner: unknown }>();
  for (const event of events) {
    if (isEventOfType(event, "summary.started")) open.set(event.data.summaryId, { kind: event.data.kind, owner: event.metadata.owner });
    else if (isEventOfType(event, "summary.ended")) open.delete(event.data.summaryId);
  }
  const closed = [...open].filter(([, { owner }]) => !isRunOwnerAlive(owner));
  const writes: NewEvent[] = closed.map(([summaryId, { kind }]) => ({ type: "summary.ended", data: { summaryId, kind, status: "interrupted", message: INTERRUPTED_SUMMARY_TEXT } }));
  if (writes.length > 0) await session.appendEvents(writes);
  return closed.map(([summaryId]) => summaryId);
}

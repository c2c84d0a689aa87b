/**
 * Recovery of summary intents: a `summary.started` whose process died before its `summary.ended` (read from `view.activity`) is closed with one
 * `summary.ended { status: "interrupted" }` per intent, in one version-checked append through the session's writer, but only when its owner is
 * gone (as run recovery decides). Rejects with the append's error and then writes nothing.
 */
import type { NewEvent } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { isRunOwnerAlive } from "./run-lease.ts";
import type { SessionWrites } from "./session-slot.ts";

/** The text of an interrupted summary's ending. */
const INTERRUPTED_SUMMARY_TEXT = "The process stopped while the summary model was called; no summary was appended. Run it again (compact, or move with a summary).";

/** Closes the session's open summary intents whose owner is gone; returns their summary ids. */
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

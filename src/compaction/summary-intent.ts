/**
 * The logged intent of a summary model call (commit before effect outside runs): {@link startSummaryIntent} resolves once `summary.started` is
 * durable; `appended(entryId)` goes in the summary entry's own append; `end(status)` never rejects (recovery closes what cannot be written).
 */
import { randomUUID } from "node:crypto";
import { currentRunOwner } from "../machines/run-lease.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { ArborEventData } from "../store/events/catalogue.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { ignored } from "../core/ignored.ts";

/** The kind of summary: a compaction's, or a branch summary left by `moveTo`. */
type SummaryKind = ArborEventData<"summary.started">["kind"];

/** A started summary intent (see the module contract). */
export interface SummaryIntent {
  readonly summaryId: string;
  /** The `summary.ended { status: "appended", entryId }` event for the summary entry's append. */
  appended(entryId: string): NewEvent;
  /** Appends `summary.ended` with `status`; never rejects. */
  end(status: "failed" | "cancelled", message?: string): Promise<void>;
}

/**
 * Commits `summary.started` for a summary of `kind` prepared from the session's current leaf.
 * Rejects with the append's error (e.g. `ExpectedVersionConflictError`).
 */
export async function startSummaryIntent(session: SessionHandle, kind: SummaryKind, reason: string): Promise<SummaryIntent> {
  const summaryId = randomUUID();
  const started: ArborEventData<"summary.started"> = { summaryId, kind, reason, fromLeafId: session.view.leafId };
  // Intents go through the session's one writer like every other write.
  const writes = sessionActorOf(session).writes;
  await writes.appendEvents([{ type: "summary.started", data: started, metadata: { owner: currentRunOwner() } }]);
  const ended = (data: Omit<ArborEventData<"summary.ended">, "summaryId" | "kind">): NewEvent => ({ type: "summary.ended", data: { summaryId, kind, ...data } });
  return {
    summaryId,
    appended: (entryId) => ended({ status: "appended", entryId }),
    async end(status, message) {
      try {
        await writes.appendEvents([ended({ status, ...(message === undefined ? {} : { message }) })]);
      } catch (error) {
        ignored("a summary intent's end cannot be written (another writer, a closed log); recovery closes it", error);
      }
    },
  };
}

/**
 * The logged intent of a summary model call (a compaction or a branch summary): commit before
 * effect for the model calls that are not a run's.
 *
 * Contract (ours; the events are `summary.started` / `summary.ended`, `src/store/events/summary-events.ts`):
 * - {@link startSummaryIntent} commits `summary.started` (with `metadata.owner`, this process)
 *   and resolves only then, so the model is called after its intent is durable; it rejects
 *   with the append's error, and the caller then makes no model call;
 * - `appended(entryId)` is the `summary.ended` event to append in the SAME append as the
 *   summary entry; `end(status, message)` appends a failed or cancelled ending on its own and
 *   never rejects (a session that can no longer be written is closed later by recovery,
 *   `closeInterruptedSummaries`).
 *
 * @example
 * ```ts
 * const intent = await startSummaryIntent(session, "compaction", "manual");
 * const outcome = await callTheModel();
 * if (!outcome.ok) await intent.end("failed", outcome.message);
 * else await session.appendEntries([entry], { extraEvents: [intent.appended(entry.id)] });
 * ```
 */
import { randomUUID } from "node:crypto";
import { currentRunOwner } from "../machines/run-lease.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { ArborEventData } from "../store/events/catalogue.ts";
import type { SessionHandle } from "../store/session-types.ts";

/** The kind of summary: a compaction's, or a branch summary left by `moveTo`. */
type SummaryKind = ArborEventData<"summary.started">["kind"];

/**
 * A started summary intent (see the module contract).
 *
 * @example
 * ```ts
 * await session.appendEntries([entry], { extraEvents: [intent.appended(entryId)] });
 * ```
 */
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
 *
 * @example
 * ```ts
 * const intent = await startSummaryIntent(session, "branch_summary", "navigation");
 * ```
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
      } catch {
        // The session cannot be written (another writer, a closed log): recovery closes the intent.
      }
    },
  };
}

/**
 * Retention of streamed deltas (ours), shared by the three logs (the SQLite
 * log applies it inside its group commit, `sqlite-delta-retention.ts`).
 *
 * Contract:
 * - a message is "ended and kept" once a `message.ended` with an `entryId` is committed (the entry
 *   holds the full text). Deltas of messages still streaming (a run interrupted mid-message, a
 *   process killed with `kill -9`) and of discarded attempts (a `message.ended` without
 *   `entryId`: a retried model call) are never touched;
 * - `endedMessageDeltas: "delete"` DELETES the stored `message.delta` events of an ended, kept
 *   message, IN THE TRANSACTION that commits its `message.ended` (SQLite, PostgreSQL; the memory
 *   log in the same synchronous append). The deleted events are those of that message after its
 *   `message.started`; a message without a logged `message.started` keeps its deltas. What stays
 *   keeps its version, global position and bytes; the stream's version (the next
 *   `expectedVersion`) is unchanged, and the stream's last event is never deleted (a message's
 *   deltas precede its `message.ended`). So a stream's versions may have GAPS, only strictly
 *   inside a message's `message.started`..`message.ended` span (like a truncation, KurrentDB's
 *   `$tb`, but in the middle): readers get the events in version order, ascending but not
 *   contiguous; the folds accept a gap only while a message is open (`version-gaps.ts`); a reader
 *   that was behind gets the message's full text from its entry (`ui-projection.ts`). A replay of
 *   a finished run no longer has its token stream, only its messages. A deleted event's
 *   eventId is forgotten: re-appending it (a caller-given id) is a new append, not a retry (the
 *   runtime gives deltas no caller ids); a subscriber behind the commit of the `message.ended`
 *   never sees the deleted deltas (a fast reply commits deltas and end together: nobody does);
 * - `endedMessageDeltas: "drop"` empties the `delta` text of those events instead and
 *   keeps the rows (versions stay contiguous; it saves only the text's bytes);
 * - `onDropped` receives, per message, how many delta events were deleted or emptied and the
 *   UTF-8 bytes of text they held; default `"keep"` (nothing dropped); any other value is an
 *   `InvalidArgumentError` naming it.
 *
 * @example
 * ```ts
 * const log = createMemoryEventLog({ retention: { endedMessageDeltas: "delete", onDropped: (saved) => console.log(saved.events) } });
 * ```
 */
import { InvalidArgumentError } from "../core/errors.ts";
import { isEventOfType } from "./events/catalogue.ts";

/**
 * What one retention pass saved: delta events emptied and the bytes of text they held (UTF-8).
 *
 * @example
 * ```ts
 * const saved: DroppedDeltas = { messageId: "m1", events: 12, bytes: 480 };
 * ```
 */
export interface DroppedDeltas {
  messageId: string;
  events: number;
  bytes: number;
}

/** The retention option of the three logs (see the module contract). */
export interface DeltaRetention {
  /** `"delete"` deletes the delta events of ended, kept messages, `"drop"` empties their text; default `"keep"`. */
  endedMessageDeltas?: "keep" | "drop" | "delete";
  /** What each message's pass saved (delta events deleted or emptied, UTF-8 bytes of text). */
  onDropped?: (saved: DroppedDeltas) => void;
}

/**
 * A retention that removes something: its mode and the observer of each message's saving.
 *
 * @example
 * ```ts
 * const active: ActiveDeltaRetention = { mode: "delete", report: (saved) => console.log(saved.events) };
 * ```
 */
export interface ActiveDeltaRetention {
  mode: "drop" | "delete";
  report(saved: DroppedDeltas): void;
}

/**
 * The active retention, or undefined when deltas are kept.
 *
 * @throws InvalidArgumentError for an `endedMessageDeltas` other than `"keep"`, `"drop"` or `"delete"`.
 * @example
 * ```ts
 * const retention = resolveDeltaRetention({ endedMessageDeltas: "delete" }); // { mode: "delete", report }
 * ```
 */
export function resolveDeltaRetention(retention: DeltaRetention | undefined): ActiveDeltaRetention | undefined {
  const mode = retention?.endedMessageDeltas;
  if (retention === undefined || mode === undefined || mode === "keep") return undefined;
  if (mode !== "drop" && mode !== "delete") throw new InvalidArgumentError(`retention.endedMessageDeltas must be "keep", "drop" or "delete", got ${JSON.stringify(mode)}.`);
  return {
    mode,
    report(saved) {
      retention.onDropped?.(saved);
    },
  };
}

/**
 * The ids of the messages a batch ends and keeps (`message.ended` with an `entryId`), in order.
 *
 * @example
 * ```ts
 * endedKeptMessages([{ type: "message.ended", data: { messageId: "m1", entryId: "e1" } }]); // ["m1"]
 * ```
 */
export function endedKeptMessages(events: readonly { type: string; data: unknown }[]): string[] {
  const ids: string[] = [];
  for (const event of events) {
    if (!isEventOfType(event, "message.ended")) continue;
    if (event.data.entryId !== undefined) ids.push(event.data.messageId);
  }
  return ids;
}

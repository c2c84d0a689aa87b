/**
 * Retention of streamed deltas (ours), shared by the three logs (SQLite applies it inside its group commit, `sqlite-delta-retention.ts`).
 * - only the deltas of a message "ended and kept" (a committed `message.ended` with an `entryId`) are touched, never those of a message still
 *   streaming or of a discarded attempt;
 * - `"delete"` deletes them in the transaction of that `message.ended`, leaving version gaps strictly inside the message's span (the folds accept
 *   them, `version-gaps.ts`; readers that were behind get the text from the entry); a deleted eventId is forgotten;
 * - `"drop"` empties their `delta` text and keeps the rows; `"keep"` is the default; `onDropped` gets the events and UTF-8 bytes each message saved;
 *   any other value is an `InvalidArgumentError`.
 */
import { InvalidArgumentError } from "../../core/errors.ts";
import { isEventOfType } from "../events/catalogue.ts";
import type { DeltaRetentionMode } from "../../core/vocabulary.ts";

/** What one retention pass saved: delta events emptied and the bytes of text they held (UTF-8). */
export interface DroppedDeltas {
  messageId: string;
  events: number;
  bytes: number;
}

/** The retention option of the three logs (see the module contract). */
export interface DeltaRetention {
  /** `"delete"` deletes the delta events of ended, kept messages, `"drop"` empties their text; default `"keep"`. */
  endedMessageDeltas?: DeltaRetentionMode;
  /** What each message's pass saved (delta events deleted or emptied, UTF-8 bytes of text). */
  onDropped?: (saved: DroppedDeltas) => void;
}

/** A retention that removes something: its mode and the observer of each message's saving. */
export interface ActiveDeltaRetention {
  mode: Exclude<DeltaRetentionMode, "keep">;
  report(saved: DroppedDeltas): void;
}

/**
 * The active retention, or undefined when deltas are kept.
 *
 * @throws InvalidArgumentError for an `endedMessageDeltas` other than `"keep"`, `"drop"` or `"delete"`.
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

/** The ids of the messages a batch ends and keeps (`message.ended` with an `entryId`), in order. */
export function endedKeptMessages(events: readonly { type: string; data: unknown }[]): string[] {
  const ids: string[] = [];
  for (const event of events) {
    if (!isEventOfType(event, "message.ended")) continue;
    if (event.data.entryId !== undefined) ids.push(event.data.messageId);
  }
  return ids;
}

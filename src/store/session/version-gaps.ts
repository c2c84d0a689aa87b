/**
 * Which gaps in a session stream's versions a fold accepts (ours): the delete retention (`delta-retention.ts`) removes versions only strictly inside
 * a message's `message.started`..`message.ended` span, so a fold accepts a skip only while a message is open; any other gap is a missed event and
 * throws. What the removed deltas would have folded is dropped by the `message.ended` anyway.
 */
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import type { SessionActivity } from "./session-activity.ts";

/** The open messages of a fold, kept as it folds events (see the module contract). */
export interface GapCheck {
  /** True when a message is open, so a gap of removed deltas may come next. */
  allows(): boolean;
  /** Notes a folded event (`message.started` opens its message, `message.ended` closes it). */
  fold(event: StoredEvent): void;
}

/** A {@link GapCheck} starting from the open messages of `activity` (the fold's state so far). */
export function createGapCheck(activity: SessionActivity | undefined): GapCheck {
  const open = new Set<string>();
  for (const message of activity?.openRun?.openMessages ?? []) open.add(message.messageId);
  return {
    allows: () => open.size > 0,
    fold(event) {
      if (isEventOfType(event, "message.started")) open.add(event.data.messageId);
      else if (isEventOfType(event, "message.ended")) open.delete(event.data.messageId);
    },
  };
}

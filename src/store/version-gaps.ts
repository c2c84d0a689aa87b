/**
 * Which gaps in a session stream's versions a fold accepts (ours).
 *
 * Contract:
 * - a log whose retention deletes the `message.delta` rows of a message once its `message.ended`
 *   with an `entryId` is committed (`delta-retention.ts`, `endedMessageDeltas: "delete"`) leaves
 *   a gap in the stream's versions, and every removed version lies strictly between that
 *   message's `message.started` and its `message.ended`;
 * - so a fold (the session tree, the lazy view) accepts an event that skips versions only while
 *   a message is open: started (`message.started`) and not yet ended (`message.ended`) in what it
 *   folded. Any other gap is a missed event and the fold throws, as before;
 * - what the removed deltas would have folded (the open run's streamed blocks of that message,
 *   `session-activity.ts`) is dropped by the message's `message.ended` anyway, so the state after
 *   the `message.ended` is the same with or without them.
 *
 * @example
 * ```ts
 * const gaps = createGapCheck(activity);
 * for (const event of events) {
 *   if (event.version !== expected && !gaps.allows()) throw new Error("gap");
 *   gaps.fold(event);
 * }
 * ```
 */
import type { StoredEvent } from "./event-log.ts";
import { isEventOfType } from "./events/catalogue.ts";
import type { SessionActivity } from "./session-activity.ts";

/**
 * The open messages of a fold, kept as it folds events (see the module contract).
 *
 * @example
 * ```ts
 * const gaps = createGapCheck(undefined);
 * gaps.allows(); // false: no message is open
 * ```
 */
export interface GapCheck {
  /** True when a message is open, so a gap of removed deltas may come next. */
  allows(): boolean;
  /** Notes a folded event (`message.started` opens its message, `message.ended` closes it). */
  fold(event: StoredEvent): void;
}

/**
 * A {@link GapCheck} starting from the open messages of `activity` (the fold's state so far).
 *
 * @example
 * ```ts
 * const gaps = createGapCheck(tree.state.activity);
 * ```
 */
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

/**
 * Retention of streamed deltas (ours, issue 16), shared by the PostgreSQL and in-memory logs
 * (the SQLite log does the same inside its group commit, `log-group-commit.ts`).
 *
 * Contract:
 * - `endedMessageDeltas: "drop"` empties the `delta` of every stored `message.delta` of a
 *   message once its `message.ended` with an `entryId` (the message was kept: the entry holds
 *   the full text) is committed; the delta events stay, so versions stay contiguous; deltas of
 *   messages still streaming and of discarded attempts (no `entryId`) are kept;
 * - `onDropped` receives, per message, how many delta events were emptied and the UTF-8 bytes
 *   of text they held; default `"keep"` (nothing dropped); any other value is an
 *   `InvalidArgumentError` naming it.
 *
 * @example
 * ```ts
 * const log = createMemoryEventLog({ retention: { endedMessageDeltas: "drop", onDropped: (saved) => console.log(saved.bytes) } });
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

/** The retention option of the PostgreSQL and in-memory logs (the SQLite log's has the same shape). */
export interface DeltaRetention {
  /** `"drop"` empties the deltas of ended, kept messages; default `"keep"`. */
  endedMessageDeltas?: "keep" | "drop";
  /** What each message's pass saved (delta events emptied, UTF-8 bytes of text). */
  onDropped?: (saved: DroppedDeltas) => void;
}

/**
 * The observer to call when deltas are dropped, or undefined when they are kept.
 *
 * @throws InvalidArgumentError for an `endedMessageDeltas` other than `"keep"` or `"drop"`.
 * @example
 * ```ts
 * const report = resolveDeltaRetention({ endedMessageDeltas: "drop" }); // a function
 * ```
 */
export function resolveDeltaRetention(retention: DeltaRetention | undefined): ((saved: DroppedDeltas) => void) | undefined {
  if (retention === undefined || retention.endedMessageDeltas === undefined || retention.endedMessageDeltas === "keep") return undefined;
  if (retention.endedMessageDeltas !== "drop") throw new InvalidArgumentError(`retention.endedMessageDeltas must be "keep" or "drop", got ${JSON.stringify(retention.endedMessageDeltas)}.`);
  return (saved) => retention.onDropped?.(saved);
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

/**
 * Which gaps in a session stream's versions a fold accepts (ours): the delete retention (`delta-retention.ts`) removes versions only strictly inside
 * a message's `message.started`..`message.ended` span, so a fold accepts a skip only while a message is open; any other gap is a missed event and
 * throws. What the removed deltas would have folded is dropped by the `message.ended` anyway. The audit of whole stored streams
 * ({@link createStreamGapAudit}, for `arbor doctor`) is stricter: it also knows how each message ended.
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

/** Versions missing from a stored stream that the delete retention cannot have removed: a lost event. */
export interface LostVersions {
  streamId: string;
  /** The first and last missing version. */
  from: number;
  to: number;
  /** Where the gap lies, and why it cannot be removed deltas. */
  reason: string;
}

/** What {@link createStreamGapAudit} reads of a stored event; `data` is undefined when it cannot be read (sealed or damaged). */
export interface AuditedEvent {
  streamId: string;
  version: number;
  type: string;
  data?: unknown;
}

/** A gap inside open messages, waiting for one of them to end kept with its entry in the stream. */
interface PendingGap {
  from: number;
  to: number;
  messages: Set<string>;
}

interface AuditedStream {
  version: number;
  open: Set<string>;
  entries: Set<string>;
  pending: PendingGap[];
}

/** The message key of sealed data, whose message ids cannot be read: its messages are taken as one after another. */
const UNREADABLE = "(unreadable)";

/**
 * Audits whole stored streams, their events given in log order (`arbor doctor`). The delete retention removes only the `message.delta` rows of a
 * message that ended kept, strictly inside its `message.started`..`message.ended` span; so a gap is a lost event when it lies outside every open
 * message, when none of the messages open across it ends with an entry, or when the message that ends names an entry the stream lacks (a message's
 * own `entry.appended` lies inside its span). A message whose data cannot be read is taken as kept with its entry (nothing to check it against).
 */
export function createStreamGapAudit(): { next(event: AuditedEvent): LostVersions[]; end(recorded: ReadonlyMap<string, number>): LostVersions[] } {
  const streams = new Map<string, AuditedStream>();
  const lost = (streamId: string, gap: { from: number; to: number }, reason: string): LostVersions => ({ streamId, from: gap.from, to: gap.to, reason });
  return {
    next(event) {
      let stream = streams.get(event.streamId);
      if (!stream) streams.set(event.streamId, (stream = { version: 0, open: new Set(), entries: new Set(), pending: [] }));
      const found: LostVersions[] = [];
      if (event.version > stream.version + 1) {
        const gap = { from: stream.version + 1, to: event.version - 1 };
        if (stream.open.size === 0) found.push(lost(event.streamId, gap, "outside any open message"));
        else stream.pending.push({ ...gap, messages: new Set(stream.open) });
      }
      stream.version = Math.max(stream.version, event.version);
      const data = (event.data ?? {}) as { messageId?: string; entryId?: string; entry?: { id?: string } };
      const messageId = event.data === undefined ? UNREADABLE : String(data.messageId);
      if (event.type === "entry.appended" && data.entry?.id !== undefined) stream.entries.add(data.entry.id);
      else if (event.type === "message.started") stream.open.add(messageId);
      else if (event.type === "message.ended") {
        stream.open.delete(messageId);
        const kept = event.data === undefined || (data.entryId !== undefined && stream.entries.has(data.entryId));
        const reason = data.entryId === undefined ? "inside messages that did not end with an entry" : `inside message ${messageId}, whose entry ${data.entryId} the stream lacks`;
        stream.pending = stream.pending.filter((gap) => {
          if (!gap.messages.delete(messageId)) return true;
          if (kept) return false;
          if (gap.messages.size > 0 && data.entryId === undefined) return true;
          found.push(lost(event.streamId, gap, reason));
          return false;
        });
      }
      return found;
    },
    end(recorded) {
      const found: LostVersions[] = [];
      for (const [streamId, stream] of streams) {
        for (const gap of stream.pending) found.push(lost(streamId, gap, "inside a message that never ended"));
        const version = recorded.get(streamId) ?? stream.version;
        if (version > stream.version) found.push(lost(streamId, { from: stream.version + 1, to: version }, `after the last stored event (the stream is at version ${version})`));
      }
      for (const [streamId, version] of recorded) {
        if (!streams.has(streamId) && version > 0) found.push(lost(streamId, { from: 1, to: version }, "every event of the stream"));
      }
      return found;
    },
  };
}

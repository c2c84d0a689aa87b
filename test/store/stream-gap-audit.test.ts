/**
 * The audit of whole stored streams behind `arbor doctor` (`createStreamGapAudit`): which missing
 * versions are deltas the delete retention removed and which are lost events. The end-to-end case
 * on a real file and the real CLI is `test/cli/cli-doctor.test.ts`.
 */
import { describe, expect, it } from "vitest";
import { createStreamGapAudit, type AuditedEvent } from "../../src/store/session/version-gaps.ts";

const S = "session-a";
const started = (version: number, messageId: string): AuditedEvent => ({ streamId: S, version, type: "message.started", data: { messageId, role: "assistant" } });
const entry = (version: number, id: string): AuditedEvent => ({ streamId: S, version, type: "entry.appended", data: { entry: { id, type: "message" } } });
const ended = (version: number, messageId: string, entryId?: string): AuditedEvent => ({
  streamId: S,
  version,
  type: "message.ended",
  data: { messageId, role: "assistant", ...(entryId ? { entryId } : {}) },
});
const other = (version: number, streamId = S): AuditedEvent => ({ streamId, version, type: "turn.started", data: {} });

/** Every lost stretch the audit finds in `events`, then at the end with the streams' recorded versions. */
function audit(events: AuditedEvent[], recorded: Record<string, number> = {}) {
  const gaps = createStreamGapAudit();
  const found = events.flatMap((event) => gaps.next(event));
  return [...found, ...gaps.end(new Map(Object.entries(recorded)))].map(({ streamId, from, to }) => ({ streamId, from, to }));
}

describe("the stream gap audit", () => {
  it("passes the deleted deltas of a kept message, the message's own entry kept", () => {
    expect(audit([other(1), started(2, "m"), entry(6, "e"), ended(7, "m", "e"), other(8)], { [S]: 8 })).toEqual([]);
  });

  it("finds a gap outside any message, one inside a message whose entry is gone, and one inside a discarded message", () => {
    expect(audit([other(1), other(3)])).toEqual([{ streamId: S, from: 2, to: 2 }]);
    expect(audit([started(1, "m"), ended(4, "m", "e")])).toEqual([{ streamId: S, from: 2, to: 3 }]);
    expect(audit([started(1, "m"), ended(3, "m")])).toEqual([{ streamId: S, from: 2, to: 2 }]);
  });

  it("waits for the other message open across a gap when one ends discarded", () => {
    expect(audit([started(1, "a"), started(2, "b"), entry(5, "e"), ended(6, "a"), ended(7, "b", "e")])).toEqual([]);
    expect(audit([started(1, "a"), started(2, "b"), ended(5, "a"), ended(6, "b")])).toEqual([{ streamId: S, from: 3, to: 4 }]);
  });

  it("finds a gap inside a message that never ended, lost events at a stream's end, and a stream with none left", () => {
    expect(audit([started(1, "m"), other(3)], { [S]: 3 })).toEqual([{ streamId: S, from: 2, to: 2 }]);
    expect(audit([other(1), other(2)], { [S]: 4 })).toEqual([{ streamId: S, from: 3, to: 4 }]);
    expect(audit([other(1)], { [S]: 1, "workflow-w": 2 })).toEqual([{ streamId: "workflow-w", from: 1, to: 2 }]);
  });

  it("takes a message whose data cannot be read (sealed) as kept, and keeps streams apart", () => {
    const sealed = (version: number, type: string): AuditedEvent => ({ streamId: S, version, type });
    expect(audit([sealed(1, "message.started"), sealed(4, "entry.appended"), sealed(5, "message.ended")])).toEqual([]);
    expect(audit([other(1), other(1, "session-b"), other(2), other(3, "session-b")])).toEqual([{ streamId: "session-b", from: 2, to: 2 }]);
  });
});

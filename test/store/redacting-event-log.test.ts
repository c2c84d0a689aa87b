import { describe, expect, it } from "vitest";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { createRedactingEventLog } from "../../src/store/log/redacting-event-log.ts";
import { sessionStreamId } from "../../src/store/events/session-events.ts";

const entry = (text: string) => ({
  type: "entry.appended",
  data: { entry: { type: "message", id: "a1", parentId: null, timestamp: "2026-11-30T00:00:00.000Z", message: { role: "user", content: text, timestamp: 1 } } },
});

describe("createRedactingEventLog", () => {
  it("replaces registered secrets in nested strings and keys before they are stored", async () => {
    const inner = createMemoryEventLog();
    const log = createRedactingEventLog(inner, ["sk-live-123456"]);
    log.addSecret("tok"); // too short to redact safely: ignored
    await log.append(sessionStreamId("s"), [entry("key sk-live-123456 and tok")]);
    const [stored] = await inner.readStream(sessionStreamId("s"));
    const text = JSON.stringify(stored.data);
    expect(text).not.toContain("sk-live-123456");
    expect(text).toContain("key [redacted] and tok");
  });

  it("redacts secrets added later, and leaves other events untouched", async () => {
    const inner = createMemoryEventLog();
    const log = createRedactingEventLog(inner);
    await log.append(sessionStreamId("s"), [entry("before secret-value-9")]);
    log.addSecret("secret-value-9");
    await log.append(sessionStreamId("t"), [entry("after secret-value-9")]);
    const all = await log.readAll();
    expect(JSON.stringify(all[0].data)).toContain("before secret-value-9"); // the log is append-only
    expect(JSON.stringify(all[1].data)).toContain("after [redacted]");
  });
});

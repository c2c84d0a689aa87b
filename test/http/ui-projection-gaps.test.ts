/**
 * The UI projection over a run whose deltas the log deleted (retention `"delete"`, issue 17 P6):
 * a reader that saw none, some or all of a message's deltas sends the same text, once, closed.
 */
import type { UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import type { ArborEvent } from "../../src/store/events/catalogue.ts";
import { projectRun } from "../../src/http/ui-projection.ts";

const TEXT = "hello world, streamed in pieces";
let version = 0;
const at = (type: string, data: unknown): ArborEvent => {
  version += 1;
  return { eventId: `e${version}`, streamId: "session-s", version, globalPosition: version, type, schemaVersion: 1, time: "", data, metadata: { runId: "r", turnId: "t" } } as ArborEvent;
};

function run(seen: (index: number) => boolean): UIMessageChunk[] {
  version = 0;
  const pieces = ["hello ", "world, ", "streamed ", "in pieces"];
  const deltas = pieces.map((delta) => at("message.delta", { messageId: "m", kind: "text", contentIndex: 0, delta }));
  const assistant = { role: "assistant", content: [{ type: "text", text: TEXT }], api: "a", provider: "p", model: "m", stopReason: "stop", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 }, timestamp: 1 };
  const events = [
    at("run.started", { runId: "r", kind: "prompt" }),
    at("turn.started", { turnId: "t", index: 0 }),
    at("message.started", { messageId: "m", role: "assistant" }),
    ...deltas.filter((_, index) => seen(index)),
    at("entry.appended", { entry: { type: "message", id: "a", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: assistant } }),
    at("message.ended", { messageId: "m", role: "assistant", entryId: "a", stopReason: "stop" }),
    at("turn.ended", { turnId: "t", index: 0 }),
    at("run.ended", { runId: "r", status: "done" }),
  ];
  return projectRun(events);
}

const textOf = (chunks: UIMessageChunk[]) => chunks.flatMap((chunk) => (chunk.type === "text-delta" ? [chunk.delta] : [])).join("");
const count = (chunks: UIMessageChunk[], type: string) => chunks.filter((chunk) => chunk.type === type).length;

describe("UI projection across deleted deltas", () => {
  it("sends the whole text once whether it saw every delta, the first ones only, or none", () => {
    for (const seen of [() => true, (index: number) => index < 2, () => false]) {
      const chunks = run(seen);
      expect(textOf(chunks)).toBe(TEXT);
      expect(count(chunks, "text-start")).toBe(1);
      expect(count(chunks, "text-end")).toBe(1);
      expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
    }
  });

  it("with every delta seen, adds nothing after them", () => {
    const chunks = run(() => true);
    expect(count(chunks, "text-delta")).toBe(4);
  });
});

import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/core/entries.ts";
import { InvalidStateError } from "../../src/core/errors.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { createSessionView } from "../../src/store/session/session-view.ts";

/** Given events, build a view (the projection spec helper). */
function given(entries: Partial<SessionEntry>[], extra: { after?: number; event: Omit<StoredEvent, "version" | "globalPosition" | "streamId" | "eventId" | "schemaVersion" | "time" | "metadata"> }[] = []) {
  const view = createSessionView("t");
  let version = 0;
  const push = (type: string, data: unknown) => {
    version += 1;
    view.apply({ eventId: `e${version}`, streamId: "session-t", version, globalPosition: version, type, schemaVersion: 1, time: "2026-01-01T00:00:00.000Z", data, metadata: {} });
  };
  push("session.created", { sessionId: "t", cwd: "/w", createdAt: "2026-01-01T00:00:00.000Z" });
  entries.forEach((entry, index) => {
    push("entry.appended", { entry: { timestamp: `2026-01-01T00:00:${String(index + 10).padStart(2, "0")}.000Z`, ...entry } });
    for (const item of extra.filter((candidate) => candidate.after === index)) push(item.event.type, item.event.data);
  });
  return { view, push };
}

const msg = (id: string, parentId: string | null, role: "user" | "assistant" = "user", more: Record<string, unknown> = {}): Partial<SessionEntry> => ({
  type: "message",
  id,
  parentId,
  message:
    role === "user"
      ? { role: "user", content: id, timestamp: 1 }
      : ({ role: "assistant", content: [{ type: "text", text: id }], api: "a", provider: "p", model: "m", stopReason: "stop", timestamp: 2, ...more } as never),
});

describe("session tree projection", () => {
  it("indexes entries, children by time, branches root→entry and the leaf", () => {
    const { view } = given([
      msg("r", null),
      { ...msg("late", "r"), timestamp: "2026-01-01T00:09:00.000Z" },
      { ...msg("early", "r"), timestamp: "2026-01-01T00:01:00.000Z" },
      msg("x", "early", "assistant"),
    ]);
    expect(view.getEntry("x")?.parentId).toBe("early");
    expect(view.getChildren("r").map((entry) => entry.id)).toEqual(["early", "late"]);
    expect(view.getBranch("x").map((entry) => entry.id)).toEqual(["r", "early", "x"]);
    expect(view.getBranch().map((entry) => entry.id)).toEqual(["r", "early", "x"]);
    expect(view.getBranch("unknown")).toEqual([]);
    expect(view.leafId).toBe("x");
    expect(view.getEntries().map((entry) => entry.id)).toEqual(["r", "late", "early", "x"]);
  });

  it("shows orphans and self-parented entries as roots, never loops", () => {
    const { view } = given([msg("a", null), msg("orphan", "missing"), msg("self", "self"), msg("b", "a")]);
    const tree = view.getTree();
    expect(tree.map((node) => node.entry.id)).toEqual(["a", "orphan", "self"]);
    expect(tree[0].children.map((node) => node.entry.id)).toEqual(["b"]);
    expect(view.getBranch("orphan").map((entry) => entry.id)).toEqual(["orphan"]);
    const context = view.buildContext({ leafId: "self" });
    expect(context.diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["parent_cycle"]);
    expect(view.buildContext({ leafId: "orphan" }).diagnostics.map((diagnostic) => diagnostic.kind)).toEqual(["missing_parent"]);
  });

  it("restores the leaf from leaf.moved, labels latest-wins, name latest session_info", () => {
    const { view, push } = given([
      msg("a", null),
      msg("b", "a", "assistant"),
      { type: "label", id: "l1", parentId: "b", targetId: "a", label: "first" },
      { type: "label", id: "l2", parentId: "l1", targetId: "a", label: "second" },
      { type: "label", id: "l3", parentId: "l2", targetId: "b", label: "bee" },
      { type: "label", id: "l4", parentId: "l3", targetId: "b" },
      { type: "session_info", id: "i1", parentId: "l4", name: "  Named  " },
    ]);
    expect(view.getLabel("a")).toBe("second");
    expect(view.getLabel("b")).toBeUndefined();
    expect(view.getTree()[0].label).toBe("second");
    expect(view.name).toBe("Named");
    push("leaf.moved", { leafId: "a", fromLeafId: "i1" });
    expect(view.leafId).toBe("a");
    push("entry.appended", { entry: { type: "session_info", id: "i2", parentId: "a", timestamp: "2026-01-02T00:00:00.000Z", name: "" } });
    expect(view.name).toBeUndefined();
    push("leaf.moved", { leafId: null, fromLeafId: "i2" });
    expect(view.leafId).toBeNull();
    expect(view.buildContext().messages).toEqual([]);
  });

  it("ignores event types it does not fold but advances its version; refuses gaps", () => {
    const { view, push } = given([msg("a", null)]);
    push("run.started", { runId: "r", kind: "prompt" });
    expect(view.version).toBe(3);
    expect(view.getEntries()).toHaveLength(1);
    // An already-applied version is ignored.
    view.apply({ eventId: "dup", streamId: "session-t", version: 2, globalPosition: 2, type: "leaf.moved", schemaVersion: 1, time: "", data: { leafId: null, fromLeafId: "a" }, metadata: {} });
    expect(view.leafId).toBe("a");
    expect(() =>
      view.apply({ eventId: "gap", streamId: "session-t", version: 9, globalPosition: 9, type: "leaf.moved", schemaVersion: 1, time: "", data: { leafId: null, fromLeafId: "a" }, metadata: {} }),
    ).toThrow(InvalidStateError);
  });

  it("accepts a gap only inside an open message (its deltas deleted by retention), ending in the same state", () => {
    const at = (version: number, type: string, data: unknown, runId = "r"): StoredEvent => ({ eventId: `g${version}`, streamId: "session-t", version, globalPosition: version, type, schemaVersion: 1, time: "", data, metadata: { runId } });
    const delta = (version: number, text: string) => at(version, "message.delta", { messageId: "m", kind: "text", contentIndex: 0, delta: text });
    const entry = msg("a", null, "assistant") as SessionEntry;
    const full = [
      at(1, "session.created", { sessionId: "t", cwd: "/w", createdAt: "2026-01-01T00:00:00.000Z" }),
      at(2, "run.started", { runId: "r", kind: "prompt" }),
      at(3, "message.started", { messageId: "m", role: "assistant" }),
      delta(4, "hello "),
      delta(5, "world"),
      at(6, "entry.appended", { entry: { ...entry, timestamp: "2026-01-01T00:00:10.000Z" } }),
      at(7, "message.ended", { messageId: "m", role: "assistant", entryId: "a" }),
    ];
    const withDeltas = createSessionView("t");
    withDeltas.applyAll(full);
    const gapped = full.filter((event) => event.type !== "message.delta");
    const batch = createSessionView("t");
    batch.applyAll(gapped);
    const oneByOne = createSessionView("t");
    for (const event of gapped) oneByOne.apply(event);
    for (const view of [batch, oneByOne]) {
      expect(view.version).toBe(7);
      expect(view.activity).toEqual(withDeltas.activity);
      expect(view.buildContext()).toEqual(withDeltas.buildContext());
    }
    // A gap where no message is open is still a missed event.
    expect(() => createSessionView("t").applyAll([full[0], full[2]])).toThrow(InvalidStateError);
    expect(() => batch.apply(at(9, "leaf.moved", { leafId: null, fromLeafId: "a" }))).toThrow(InvalidStateError);
  });

  it("folds a catch-up batch (applyAll) exactly like one event at a time", () => {
    const { view: oneByOne, push } = given([msg("a", null), msg("b", "a", "assistant"), { type: "label", id: "l", parentId: "b", targetId: "a", label: "x" }]);
    push("leaf.moved", { leafId: "a", fromLeafId: "l" });
    push("run.started", { runId: "r", kind: "prompt" });
    const events: StoredEvent[] = [];
    // Rebuild the same events and fold them in one batch.
    const { view: source } = given([msg("a", null), msg("b", "a", "assistant"), { type: "label", id: "l", parentId: "b", targetId: "a", label: "x" }]);
    let version = source.version;
    const more = [
      { type: "leaf.moved", data: { leafId: "a", fromLeafId: "l" } },
      { type: "run.started", data: { runId: "r", kind: "prompt" } },
    ];
    const base: StoredEvent[] = [
      { eventId: "e1", streamId: "session-t", version: 1, globalPosition: 1, type: "session.created", schemaVersion: 1, time: "", data: { sessionId: "t", cwd: "/w", createdAt: "2026-01-01T00:00:00.000Z" }, metadata: {} },
      ...source.getEntries().map((entry, index) => ({ eventId: `e${index + 2}`, streamId: "session-t", version: index + 2, globalPosition: index + 2, type: "entry.appended", schemaVersion: 1, time: "", data: { entry }, metadata: {} })),
    ];
    events.push(...base);
    for (const item of more) {
      version += 1;
      events.push({ eventId: `m${version}`, streamId: "session-t", version, globalPosition: version, type: item.type, schemaVersion: 1, time: "", data: item.data, metadata: {} });
    }
    const batch = createSessionView("t");
    let emitted = 0;
    batch.changes$.subscribe(() => (emitted += 1));
    batch.applyAll(events);
    expect(emitted).toBe(1);
    expect(batch.version).toBe(oneByOne.version);
    expect(batch.leafId).toBe("a");
    expect(batch.getLabel("a")).toBe("x");
    expect(batch.getEntries()).toEqual(oneByOne.getEntries());
    expect(batch.buildContext()).toEqual(oneByOne.buildContext());
    expect(batch.getStats()).toEqual(oneByOne.getStats());
    expect(() => createSessionView("t").applyAll(events.slice(1))).toThrow(InvalidStateError);
  });

  it("emits changes$ after every applied event and keeps the @xstate/store snapshot current", () => {
    const { view, push } = given([msg("a", null)]);
    const seen: number[] = [];
    const subscription = view.changes$.subscribe((changed) => seen.push(changed.version));
    const leaves: (string | null)[] = [];
    const selection = view.tree.store.select((context) => context.leafId).subscribe((leafId) => leaves.push(leafId));
    push("entry.appended", { entry: { ...msg("b", "a"), timestamp: "2026-01-03T00:00:00.000Z" } });
    push("leaf.moved", { leafId: "a", fromLeafId: "b" });
    expect(seen).toEqual([3, 4]);
    expect(leaves).toEqual(["b", "a"]);
    subscription.unsubscribe();
    selection.unsubscribe();
  });

  it("counts stats on every branch; unknown usage stays null, never NaN or 0", () => {
    const { view } = given([msg("u", null), msg("a1", "u", "assistant"), msg("a2", "u", "assistant", { content: [{ type: "toolCall", id: "c", name: "n", arguments: {} }] })]);
    const unknown = view.getStats();
    expect(unknown.messages).toEqual({ user: 1, assistant: 2, toolResult: 0, custom: 0, other: 0, total: 3 });
    expect(unknown.toolCalls).toBe(1);
    expect(unknown.tokens).toEqual({ input: null, output: null, cacheRead: null, cacheWrite: null, total: null });
    expect(unknown.cost).toBeNull();
    expect(unknown.unknownUsageMessages).toBe(2);
    const { view: known } = given([
      msg("a1", null, "assistant", { usage: { input: 10, output: 5, cacheRead: null, cacheWrite: null, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } } }),
      msg("a2", "a1", "assistant", { usage: { input: 1, output: null, cacheRead: 2, cacheWrite: null, totalTokens: null } }),
      msg("a3", "a2", "assistant"),
    ]);
    const stats = known.getStats();
    expect(stats.tokens).toEqual({ input: 11, output: 5, cacheRead: 2, cacheWrite: null, total: 15 });
    expect(stats.cost).toBe(0.5);
    expect(stats.unknownUsageMessages).toBe(1);
  });
});

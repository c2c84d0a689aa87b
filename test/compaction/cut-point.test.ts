/**
 * findCutPoint and prepareCompaction against pi 0.73.1 on generated sessions
 * (differential), and pi's bug cases where Arbor differs on purpose.
 */
import fc from "fast-check";
import { findCutPoint as piFindCutPoint } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/core/entries.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { findCutPoint, findValidCutPoints } from "../../src/compaction/cut-point.ts";
import { estimateTokens } from "../../src/compaction/tokens.ts";
import { buildPath, pathArb } from "./session-gen.ts";

type PiEntries = Parameters<typeof piFindCutPoint>[0];
const asPi = (entries: SessionEntry[]) => entries as unknown as PiEntries;
const msg = (entry: SessionEntry) => (entry as { message?: AgentMessage }).message;

/** Extends a cut back over non-message entries like pi does (stops at a message or a compaction). */
function extendBack(entries: SessionEntry[], start: number, cut: number) {
  while (cut > start && entries[cut - 1].type !== "message" && entries[cut - 1].type !== "compaction") cut--;
  return cut;
}

describe("findCutPoint vs pi 0.73.1", () => {
  it("agrees with pi wherever pi is right, and differs only in the #7201 case", () => {
    let agreed = 0;
    let fixed = 0;
    fc.assert(
      fc.property(pathArb(50), fc.integer({ min: 1, max: 30000 }), fc.nat(), (path, keep, startSeed) => {
        if (path.length === 0) return;
        const start = startSeed % path.length;
        const ours = findCutPoint(path, start, path.length, keep);
        const pi = piFindCutPoint(asPi(path), start, path.length, keep);
        // Never at a tool result (unless the range has no valid cut point at all: then nothing is cut).
        if (findValidCutPoints(path, start, path.length).length > 0) expect(msg(path[ours.firstKeptEntryIndex])?.role).not.toBe("toolResult");
        if (ours.adjustments.length === 0) {
          agreed++;
          expect({ ...ours, adjustments: undefined }).toEqual({ ...pi, adjustments: undefined });
          return;
        }
        // Generated sessions keep results right after their calls, so only the #7201 fix can apply.
        expect(ours.adjustments).toEqual(["budget-in-tool-results"]);
        fixed++;
        const points = findValidCutPoints(path, start, path.length);
        // pi fell back to the range start (nothing to summarize) ...
        expect(pi.firstKeptEntryIndex).toBe(extendBack(path, start, points[0]));
        // ... while we cut at the last valid point, which is before the trailing tool results that hold the budget.
        expect(ours.firstKeptEntryIndex).toBe(extendBack(path, start, points[points.length - 1]));
        expect(ours.firstKeptEntryIndex).toBeGreaterThanOrEqual(pi.firstKeptEntryIndex);
        let trailing = 0;
        for (let index = path.length - 1; index > points[points.length - 1]; index--) {
          expect(msg(path[index])?.role ?? path[index].type).not.toBe("user");
          if (path[index].type === "message") trailing += estimateTokens(msg(path[index])!);
        }
        expect(trailing).toBeGreaterThanOrEqual(keep);
      }),
      { numRuns: 400, seed: 7201 },
    );
    expect(agreed).toBeGreaterThan(50);
    expect(fixed).toBeGreaterThan(3);
  });

  it("#7201: the budget crossed inside trailing tool results cuts before the tool call, not at the range start", () => {
    const path = buildPath([
      { kind: "user", size: 400 },
      { kind: "assistant", size: 400, thinking: 0, calls: [], usage: 500 },
      { kind: "user", size: 400 },
      { kind: "assistant", size: 40, thinking: 0, calls: [{ name: "bash", path: "x", result: 200_000 }], usage: 900 },
    ]);
    const pi = piFindCutPoint(asPi(path), 0, path.length, 20_000);
    const ours = findCutPoint(path, 0, path.length, 20_000);
    expect(pi.firstKeptEntryIndex).toBe(0); // pi: keep everything, summarize nothing
    expect(ours.firstKeptEntryIndex).toBe(3); // ours: keep the assistant with its huge result
    expect(msg(path[3])?.role).toBe("assistant");
    expect(ours.isSplitTurn).toBe(true);
    expect(ours.turnStartIndex).toBe(2);
  });

  it("#4570 class: a kept tool result whose call would be summarized pulls the cut back to the call", () => {
    // A steering message persisted between a call and its result (the orphan shape behind pi #4570/#6832).
    const path = buildPath([
      { kind: "user", size: 4000 },
      { kind: "assistant", size: 40, thinking: 0, calls: [{ name: "edit", path: "src/a.ts", result: 100 }], usage: 2000 },
      { kind: "assistant", size: 100, thinking: 0, calls: [], usage: 2100 },
    ]);
    const [user, call, result, late] = path;
    const steer = { type: "message", id: "steer", parentId: call.id, timestamp: call.timestamp, message: { role: "user", content: "x".repeat(100), timestamp: 1 } } as SessionEntry;
    const shaped = [user, call, steer, { ...result, parentId: "steer" } as SessionEntry, { ...late, parentId: result.id } as SessionEntry];
    const pi = piFindCutPoint(asPi(shaped), 0, shaped.length, 60);
    const ours = findCutPoint(shaped, 0, shaped.length, 60);
    expect(pi.firstKeptEntryIndex).toBe(2); // pi keeps the result and summarizes its call: an orphan
    expect(ours.adjustments).toEqual(["pairing"]);
    expect(ours.firstKeptEntryIndex).toBe(1); // ours keeps the call with its result
    expect(ours.isSplitTurn).toBe(true);
  });
});

describe("pairing guard on shuffled sessions", () => {
  it("never keeps a tool result whose call is summarized, and only ever moves the cut back", () => {
    let moved = 0;
    fc.assert(
      fc.property(pathArb(40), fc.array(fc.nat(), { maxLength: 4 }), fc.integer({ min: 1, max: 20000 }), (base, inserts, keep) => {
        // Insert steering-like user messages right after some assistants with tool calls (between a call and its result).
        const path = [...base];
        for (const seed of inserts) {
          const callers = path.flatMap((entry, index) => (msg(entry)?.role === "assistant" && (msg(entry) as { content: { type: string }[] }).content.some((b) => b.type === "toolCall") ? [index] : []));
          if (callers.length === 0) break;
          const at = callers[seed % callers.length] + 1;
          path.splice(at, 0, { type: "message", id: `steer${seed}_${at}`, parentId: null, timestamp: path[at - 1].timestamp, message: { role: "user", content: "s".repeat(seed % 3000), timestamp: 0 } } as SessionEntry);
        }
        if (path.length === 0) return;
        const ours = findCutPoint(path, 0, path.length, keep);
        const pi = piFindCutPoint(asPi(path), 0, path.length, keep);
        const callsBefore = new Set<string>();
        for (let index = 0; index < ours.firstKeptEntryIndex; index++) {
          const m = msg(path[index]);
          if (m?.role === "assistant") for (const block of m.content) if (block.type === "toolCall") callsBefore.add(block.id);
        }
        for (let index = ours.firstKeptEntryIndex; index < path.length; index++) {
          const m = msg(path[index]);
          if (m?.role === "toolResult") expect(callsBefore.has(m.toolCallId)).toBe(false);
        }
        if (ours.adjustments.includes("pairing")) {
          moved++;
          if (!ours.adjustments.includes("budget-in-tool-results")) expect(ours.firstKeptEntryIndex).toBeLessThan(pi.firstKeptEntryIndex);
        } else if (ours.adjustments.length === 0) {
          expect(ours.firstKeptEntryIndex).toBe(pi.firstKeptEntryIndex);
        }
      }),
      { numRuns: 400, seed: 4570 },
    );
    expect(moved).toBeGreaterThan(5);
  });
});

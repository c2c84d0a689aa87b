/**
 * prepareCompaction and the token estimates against pi 0.73.1 (differential),
 * plus the deliberate refusals where pi would summarize nothing.
 */
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import {
  calculateContextTokens as piCalculateContextTokens,
  convertToLlm as piConvertToLlm,
  estimateTokens as piEstimateTokens,
  migrateSessionEntries,
  parseSessionEntries,
  serializeConversation as piSerialize,
} from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/core/entries.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { entryMessage } from "../../src/compaction/entry-messages.ts";
import { prepareCompaction } from "../../src/compaction/prepare.ts";
import { serializeConversation } from "../../src/compaction/serialize.ts";
import { calculateContextTokens, estimateContextTokens, estimateTokens } from "../../src/compaction/tokens.ts";
import { buildPath, pathArb } from "./session-gen.ts";
import { sharedPath } from "../shared-dir.ts";

const piCompaction = (await import(
  pathToFileURL(join(process.cwd(), "node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js")).href
)) as {
  prepareCompaction: (entries: unknown[], settings: { enabled: boolean; reserveTokens: number; keepRecentTokens: number }) =>
    | { firstKeptEntryId: string; messagesToSummarize: AgentMessage[]; turnPrefixMessages: AgentMessage[]; isSplitTurn: boolean; tokensBefore: number; previousSummary?: string; fileOps: { read: Set<string>; written: Set<string>; edited: Set<string> } }
    | undefined;
};

const settings = (keep: number) => ({ enabled: true, reserveTokens: 16384, keepRecentTokens: keep });

describe("token accounting vs pi 0.73.1", () => {
  it("estimateTokens and calculateContextTokens agree on every generated message", () => {
    fc.assert(
      fc.property(pathArb(30), (path) => {
        for (const entry of path) {
          const message = entryMessage(entry);
          if (!message) continue;
          expect(estimateTokens(message)).toBe(piEstimateTokens(message as never));
          if (message.role === "assistant") expect(calculateContextTokens(message.usage)).toBe(piCalculateContextTokens(message.usage as never));
        }
      }),
      { numRuns: 150, seed: 1 },
    );
  });

  it("counts images like pi: 0 in user messages, 1200 tokens in tool results", () => {
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const user: AgentMessage = { role: "user", content: [{ type: "text", text: "abcd" }, image], timestamp: 0 };
    const result: AgentMessage = { role: "toolResult", toolCallId: "1", toolName: "read", content: [image], isError: false, timestamp: 0 };
    expect(estimateTokens(user)).toBe(1);
    expect(estimateTokens(result)).toBe(1200);
    expect(estimateTokens(result)).toBe(piEstimateTokens(result as never));
  });

  it("unknown usage falls back to estimates instead of counting 0 (ours)", () => {
    const messages: AgentMessage[] = [
      { role: "user", content: "x".repeat(400), timestamp: 0 },
      { role: "assistant", content: [{ type: "text", text: "y".repeat(40) }], api: "a", provider: "p", model: "m", stopReason: "stop", timestamp: 0, usage: { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null } },
    ];
    expect(estimateContextTokens(messages)).toEqual({ tokens: 110, usageTokens: 0, trailingTokens: 110, lastUsageIndex: null });
  });

  it("serializeConversation matches pi for user, assistant and tool result messages", () => {
    fc.assert(
      fc.property(pathArb(20), (path) => {
        const messages = path.flatMap((entry) => {
          const message = entryMessage(entry);
          return message && ["user", "assistant", "toolResult"].includes(message.role) ? [message] : [];
        });
        expect(serializeConversation(messages)).toBe(piSerialize(messages as never));
      }),
      { numRuns: 100, seed: 2 },
    );
  });
});

describe("prepareCompaction vs pi 0.73.1", () => {
  it("agrees with pi wherever pi is right; refuses where pi would summarize nothing", () => {
    const seen = { agreed: 0, refusedEmptyForPi: 0, alreadyCompacted: 0, fixed: 0 };
    fc.assert(
      fc.property(pathArb(45), fc.integer({ min: 1, max: 25000 }), (path, keep) => {
        const ours = prepareCompaction(path, settings(keep));
        const pi = piCompaction.prepareCompaction(path, settings(keep));
        if (!ours.ok) {
          if (ours.reason === "empty") {
            expect(path).toHaveLength(0);
            return;
          }
          if (ours.reason === "already_compacted") {
            seen.alreadyCompacted++;
            expect(pi).toBeUndefined();
            return;
          }
          // pi prepares a compaction with nothing in it (it would summarize an empty conversation).
          seen.refusedEmptyForPi++;
          expect(pi).toBeDefined();
          expect(pi!.messagesToSummarize).toEqual([]);
          expect(pi!.turnPrefixMessages).toEqual([]);
          expect(ours.message).toMatch(/^Nothing to compact/);
          return;
        }
        const prep = ours.preparation;
        expect(prep.preparedLeafId).toBe(path[path.length - 1].id);
        expect(prep.tokensBefore).toBe(pi!.tokensBefore);
        expect(prep.previousSummary).toBe(pi!.previousSummary);
        if (prep.cut.adjustments.length > 0) {
          seen.fixed++;
          // pi summarizes nothing here (#7201); we summarize what lies before the trailing tool results.
          expect(pi!.messagesToSummarize.length + pi!.turnPrefixMessages.length).toBe(0);
          return;
        }
        seen.agreed++;
        expect(prep.firstKeptEntryId).toBe(pi!.firstKeptEntryId);
        expect(prep.isSplitTurn).toBe(pi!.isSplitTurn);
        expect(prep.messagesToSummarize).toEqual(pi!.messagesToSummarize);
        expect(prep.turnPrefixMessages).toEqual(pi!.turnPrefixMessages);
        expect([...prep.fileOps.read].sort()).toEqual([...pi!.fileOps.read].sort());
        expect([...prep.fileOps.written].sort()).toEqual([...pi!.fileOps.written].sort());
        expect([...prep.fileOps.edited].sort()).toEqual([...pi!.fileOps.edited].sort());
        // What is kept plus what is summarized is the range; nothing is lost.
        expect(prep.keptEntryIds[0]).toBe(prep.firstKeptEntryId);
      }),
      { numRuns: 400, seed: 42 },
    );
    expect(seen.agreed).toBeGreaterThan(50);
    expect(seen.refusedEmptyForPi).toBeGreaterThan(5);
    expect(seen.alreadyCompacted).toBeGreaterThan(0);
    expect(seen.fixed).toBeGreaterThan(0);
  });

  it("refuses a small session with a clear message (pi would summarize an empty conversation)", () => {
    const path = buildPath([
      { kind: "user", size: 40 },
      { kind: "assistant", size: 40, thinking: 0, calls: [], usage: 100 },
    ]);
    const ours = prepareCompaction(path, settings(20000));
    expect(ours).toMatchObject({ ok: false, reason: "nothing_to_compact" });
    expect(piCompaction.prepareCompaction(path, settings(20000))!.messagesToSummarize).toEqual([]);
  });

  it("carries file operations and the previous summary through chained compactions", () => {
    const path: SessionEntry[] = buildPath([
      { kind: "user", size: 4000 },
      { kind: "assistant", size: 40, thinking: 0, calls: [{ name: "read", path: "src/a.ts", result: 4000 }], usage: 3000 },
      { kind: "assistant", size: 4000, thinking: 0, calls: [], usage: 5000 },
      { kind: "compaction", size: 200, back: 0, withDetails: true },
      { kind: "user", size: 4000 },
      { kind: "assistant", size: 40, thinking: 0, calls: [{ name: "write", path: "src/b.ts", result: 40 }], usage: 3000 },
      { kind: "user", size: 4000 },
      { kind: "assistant", size: 4000, thinking: 0, calls: [], usage: 9000 },
    ]);
    const result = prepareCompaction(path, settings(1500));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.preparation.previousSummary).toBe((path[4] as { summary: string }).summary);
    expect([...result.preparation.fileOps.read]).toContain("old/read.ts");
    expect([...result.preparation.fileOps.edited]).toContain("old/mod.ts");
    expect([...result.preparation.fileOps.written]).toContain("src/b.ts");
  });
});

describe("a real pi session (v1 fixture from pi's own tests, migrated by pi)", () => {
  const text = readFileSync(sharedPath("real-inputs/sessions/pi-v1-large-session-prefix25.jsonl"), "utf8");
  const parsed = parseSessionEntries(text) as unknown[];
  migrateSessionEntries(parsed as never);
  const path = parsed.filter((entry) => (entry as { type: string }).type !== "session") as SessionEntry[];

  it("prepares the same compaction as pi for every keep budget where pi is right", () => {
    expect(path.length).toBe(24);
    let compared = 0;
    for (const keep of [50, 200, 1000, 2000, 4000, 8000, 12000, 20000]) {
      const ours = prepareCompaction(path, settings(keep));
      const pi = piCompaction.prepareCompaction(path, settings(keep))!;
      if (!ours.ok) {
        expect(ours.reason).toBe("nothing_to_compact");
        expect(pi.messagesToSummarize.length + pi.turnPrefixMessages.length).toBe(0);
        continue;
      }
      expect(ours.preparation.tokensBefore).toBe(pi.tokensBefore);
      if (ours.preparation.cut.adjustments.length > 0) continue;
      expect(ours.preparation.firstKeptEntryId).toBe(pi.firstKeptEntryId);
      expect(ours.preparation.messagesToSummarize).toEqual(pi.messagesToSummarize);
      expect(ours.preparation.turnPrefixMessages).toEqual(pi.turnPrefixMessages);
      expect(serializeConversation(ours.preparation.messagesToSummarize)).toBe(piSerialize(piConvertToLlm(pi.messagesToSummarize as never)));
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(4);
  });
});

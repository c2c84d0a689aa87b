/**
 * compaction: preparation time (`prepareCompaction`) on a session path of 100,000 entries,
 * against pi 0.73.1's `prepareCompaction` on the same entries (ms per call, lower is better).
 *
 * Two shapes, the same entries on both sides:
 * - "linear": 20,000 turns (user, assistant with two tool calls, two results), no earlier compaction:
 *   the token estimate and the cut walk cover the whole path;
 * - "compacted": the same with a compaction 1,000 entries before the leaf (the range is short,
 *   but the context estimate still walks the path).
 * Each side runs alternately after a warm-up; the median of the runs counts. The JSON line
 * reports the linear shape.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { prepareCompaction } from "../src/compaction/prepare.ts";
import type { SessionEntry } from "../src/core/entries.ts";

type PiPrepare = (entries: unknown[], settings: { enabled: boolean; reserveTokens: number; keepRecentTokens: number }) => unknown;

const START = Date.UTC(2026, 0, 1);

function sessionPath(count: number, compactionAt?: number): SessionEntry[] {
  const entries: SessionEntry[] = [];
  const push = (fields: Record<string, unknown>) => {
    const index = entries.length;
    entries.push({
      id: index.toString(16).padStart(8, "0"),
      parentId: index ? entries[index - 1].id : null,
      timestamp: new Date(START + index * 1000).toISOString(),
      ...fields,
    } as SessionEntry);
  };
  let turn = 0;
  let lastUser = "";
  while (entries.length < count) {
    if (compactionAt !== undefined && entries.length === compactionAt) {
      push({ type: "compaction", summary: "## Goal\nFix the tests.\n".repeat(20), firstKeptEntryId: lastUser, tokensBefore: 150_000, details: { readFiles: ["a.ts"], modifiedFiles: [] } });
      continue;
    }
    const time = START + entries.length * 1000;
    lastUser = entries.length.toString(16).padStart(8, "0");
    push({ type: "message", message: { role: "user", content: `Please fix src/file${turn}.ts; the test fails with TypeError.`, timestamp: time } });
    push({
      type: "message",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "Reading, then editing." },
          { type: "toolCall", id: `r${turn}`, name: "read", arguments: { path: `src/file${turn}.ts` } },
          { type: "toolCall", id: `e${turn}`, name: "edit", arguments: { path: `src/file${turn}.ts`, oldText: "a", newText: "b" } },
        ],
        api: "openai-chat",
        provider: "openai",
        model: "gpt-test",
        usage: { input: 1200, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1280 },
        stopReason: "toolUse",
        timestamp: time,
      },
    });
    push({ type: "message", message: { role: "toolResult", toolCallId: `r${turn}`, toolName: "read", content: [{ type: "text", text: "export const x = 1;\n".repeat(30) }], isError: false, timestamp: time } });
    push({ type: "message", message: { role: "toolResult", toolCallId: `e${turn}`, toolName: "edit", content: [{ type: "text", text: "Edited." }], isError: false, timestamp: time } });
    turn++;
  }
  return entries.slice(0, count);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

export default async function run(): Promise<void> {
  const pi = (await import(pathToFileURL(join(process.cwd(), "node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js")).href)) as {
    prepareCompaction: PiPrepare;
  };
  const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
  const rows: { shape: string; arbor: number; pi: number }[] = [];
  for (const [shape, path] of [
    ["linear", sessionPath(100_000)],
    ["compacted", sessionPath(100_000, 99_000)],
  ] as const) {
    const ours = prepareCompaction(path, settings);
    const theirs = pi.prepareCompaction(path, settings) as { firstKeptEntryId: string } | undefined;
    if (!ours.ok || !theirs || ours.preparation.firstKeptEntryId !== theirs.firstKeptEntryId) {
      throw new Error(`compaction bench: Arbor and pi disagree on the ${shape} path; the timing would compare different work.`);
    }
    for (let warm = 0; warm < 3; warm++) {
      prepareCompaction(path, settings);
      pi.prepareCompaction(path, settings);
    }
    const arbor: number[] = [];
    const baseline: number[] = [];
    for (let round = 0; round < 15; round++) {
      arbor.push(time(() => prepareCompaction(path, settings)));
      baseline.push(time(() => pi.prepareCompaction(path, settings)));
    }
    rows.push({ shape, arbor: median(arbor), pi: median(baseline) });
  }
  console.table(rows.map((row) => ({ shape: row.shape, "arbor ms": row.arbor.toFixed(2), "pi 0.73.1 ms": row.pi.toFixed(2), ratio: (row.arbor / row.pi).toFixed(2) })));
  const linear = rows[0];
  console.log(JSON.stringify({ bench: "compaction", arbor: Number(linear.arbor.toFixed(3)), baseline: Number(linear.pi.toFixed(3)), unit: "ms", ratio: Number((linear.arbor / linear.pi).toFixed(3)) }));
}

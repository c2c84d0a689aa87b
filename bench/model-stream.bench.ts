/**
 * model-stream: the cost of Arbor's model adapter per streamed delta.
 *
 * Arbor: `createAiSdkModelClient(model).stream()` drained to its terminal event (the
 * events Arbor's run actor consumes). Baseline: the AI SDK's own consumer of the same
 * model, `streamText({ model, prompt }).fullStream` drained (no tools executed, one step).
 * Both read the same pre-built v3 parts from a `MockLanguageModelV4` (pull-based stream): N text deltas, and
 * one tool call whose arguments arrive in N deltas. N = 10k and 20k (linearity check).
 *
 * CPU time of this process (user + system) per delta, median of 5 rounds that alternate
 * which side goes first. JSON line: unit `µs/delta` (geometric mean over the four cases),
 * `ratio` = arbor / baseline (below 1: cheaper than streamText).
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { jsonSchema, streamText, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { createAiSdkModelClient } from "../src/adapters/model/index.ts";

const ROUNDS = 5;

function textParts(count: number): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }];
  for (let index = 0; index < count; index++) parts.push({ type: "text-delta", id: "t", delta: "word " });
  parts.push({ type: "text-end", id: "t" }, finish("stop"));
  return parts;
}

function toolParts(count: number): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }, { type: "tool-input-start", id: "c", toolName: "write" }];
  let input = '{"content":"';
  parts.push({ type: "tool-input-delta", id: "c", delta: input });
  for (let index = 0; index < count; index++) {
    parts.push({ type: "tool-input-delta", id: "c", delta: "abcd" });
    input += "abcd";
  }
  parts.push({ type: "tool-input-delta", id: "c", delta: '"}' }, { type: "tool-input-end", id: "c" }, { type: "tool-call", toolCallId: "c", toolName: "write", input: `${input}"}` }, finish("tool-calls"));
  return parts;
}

function finish(unified: "stop" | "tool-calls"): LanguageModelV4StreamPart {
  return {
    type: "finish",
    finishReason: { unified, raw: unified },
    usage: { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 10, text: 10, reasoning: undefined } },
  };
}

function modelOf(parts: LanguageModelV4StreamPart[]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => ({
      // Pull-based, like a network stream: Node's web-stream queue shifts an array, so
      // enqueuing 20k parts up front would make the mock itself quadratic.
      stream: ((): ReadableStream<LanguageModelV4StreamPart> => {
        let next = 0;
        return new ReadableStream<LanguageModelV4StreamPart>({
          pull(controller) {
            if (next < parts.length) controller.enqueue(parts[next++]);
            else controller.close();
          },
        });
      })(),
    }),
  });
}

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

async function arbor(parts: LanguageModelV4StreamPart[]): Promise<number> {
  const client = createAiSdkModelClient(modelOf(parts));
  const start = cpuMicros();
  let last = "";
  for await (const event of client.stream({ messages: [{ role: "user", content: "go", timestamp: 0 }], tools: [] }, {})) last = event.type;
  if (last !== "done") throw new Error(`arbor stream ended with ${last}`);
  return cpuMicros() - start;
}

async function baseline(parts: LanguageModelV4StreamPart[]): Promise<number> {
  const model = modelOf(parts);
  const start = cpuMicros();
  const result = streamText({ model, prompt: "go", tools: { write: tool({ description: "write", inputSchema: jsonSchema({ type: "object" }) }) }, maxRetries: 0 });
  let last = "";
  for await (const part of result.fullStream) last = part.type;
  if (last !== "finish") throw new Error(`streamText ended with ${last}`);
  return cpuMicros() - start;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export default async function run(): Promise<void> {
  const cases = [
    { name: "text 10k deltas", deltas: 10_000, parts: textParts(10_000) },
    { name: "text 20k deltas", deltas: 20_000, parts: textParts(20_000) },
    { name: "tool args 10k deltas", deltas: 10_000, parts: toolParts(10_000) },
    { name: "tool args 20k deltas", deltas: 20_000, parts: toolParts(20_000) },
  ];
  for (const item of cases) {
    // Warm-up: let the JIT settle on every path before measuring.
    await arbor(item.parts);
    await baseline(item.parts);
  }
  const rows: { name: string; arbor: number; baseline: number; ratio: number }[] = [];
  for (const item of cases) {
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        ours.push(await arbor(item.parts));
        theirs.push(await baseline(item.parts));
      } else {
        theirs.push(await baseline(item.parts));
        ours.push(await arbor(item.parts));
      }
    }
    const a = median(ours) / item.deltas;
    const b = median(theirs) / item.deltas;
    rows.push({ name: item.name, arbor: a, baseline: b, ratio: a / b });
  }
  console.log("| case | arbor µs/delta | streamText µs/delta | ratio |");
  console.log("| --- | --- | --- | --- |");
  for (const row of rows) console.log(`| ${row.name} | ${row.arbor.toFixed(2)} | ${row.baseline.toFixed(2)} | ${row.ratio.toFixed(2)} |`);
  const geo = (values: number[]) => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);
  const text10 = rows[0].arbor * 10_000;
  const text20 = rows[1].arbor * 20_000;
  console.log(`linearity (text, CPU time 20k / 10k): ${(text20 / text10).toFixed(2)}`);
  console.log(
    JSON.stringify({
      bench: "model-stream",
      arbor: Number(geo(rows.map((row) => row.arbor)).toFixed(3)),
      baseline: Number(geo(rows.map((row) => row.baseline)).toFixed(3)),
      unit: "µs/delta",
      ratio: Number(geo(rows.map((row) => row.ratio)).toFixed(3)),
    }),
  );
}

/**
 * http-load (issue 15 item 4): N concurrent chat streams against one HTTP service, each a run
 * of T tool turns against the loopback OpenAI-wire model, versus the same runs through the
 * library (harness sessions, no HTTP).
 *
 * HTTP: `createChatHandler` on a loopback port, N `DefaultChatTransport` POSTs at once (the
 * `ai` package's client), each read to the end. Library: N `session.prompt()` at once.
 * Time to first part: from the request (or `prompt()`) to the first streamed piece (a
 * `text-*` / `tool-input-*` chunk; a `message.delta` event for the library). Total: until
 * every run ended. One SQLite file per mode; the model answers T-1 tool calls, then text.
 * Each mode runs twice (library, http, http, library); the second, warm, run is reported.
 * Sizes: ARBOR_BENCH_HTTP_STREAMS (default 50) x ARBOR_BENCH_HTTP_TURNS (default 20).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DefaultChatTransport, type UIMessage } from "ai";
import { z } from "zod";
import { createOpenAIModel } from "../src/adapters/model/openai.ts";
import { defineTool } from "../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../src/harness/create-harness.ts";
import { createChatHandler } from "../src/http/chat-handler.ts";
import { startChatServer } from "../src/http/node-adapter.ts";
import { startOpenAIServer, textResponse, toolCallResponse } from "../src/testing/openai-server.ts";

const STREAMS = Number(process.env.ARBOR_BENCH_HTTP_STREAMS ?? 50);
const TURNS = Number(process.env.ARBOR_BENCH_HTTP_TURNS ?? 20);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

async function setUp(dir: string, modelUrl: string): Promise<AgentHarness> {
  return createHarness({
    eventLogPath: join(dir, "bench.db"),
    cwd: dir,
    models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: modelUrl, apiKey: "test", api: "chat" }) } },
    tools: [defineTool({ name: "step", description: "One step", parameters: z.object({ n: z.number() }), execute: async ({ n }) => ({ content: [{ type: "text", text: `step ${n} done` }] }) })],
  });
}

async function viaHttp(modelUrl: string): Promise<{ first: number[]; totalMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "arbor-http-bench-"));
  const harness = await setUp(dir, modelUrl);
  const server = await startChatServer({ handler: createChatHandler({ harness, cwd: dir }) });
  const transport = new DefaultChatTransport<UIMessage>({ api: `${server.url}/api/chat` });
  const first: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: STREAMS }, async (_, index) => {
      const at = performance.now();
      const stream = await transport.sendMessages({ chatId: `bench-${index}`, messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "go" }] }], trigger: "submit-message", messageId: undefined, abortSignal: undefined });
      const reader = stream.getReader();
      let seen = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!seen && (value.type.startsWith("text-") || value.type.startsWith("tool-input"))) {
          seen = true;
          first.push(performance.now() - at);
        }
      }
    }),
  );
  const totalMs = performance.now() - started;
  await server.close();
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
  return { first, totalMs };
}

async function viaLibrary(modelUrl: string): Promise<{ first: number[]; totalMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), "arbor-lib-bench-"));
  const harness = await setUp(dir, modelUrl);
  const sessions = await Promise.all(Array.from({ length: STREAMS }, () => harness.createSession({ cwd: dir })));
  const first: number[] = [];
  const started = performance.now();
  await Promise.all(
    sessions.map(async (session) => {
      const at = performance.now();
      let seen = false;
      const subscription = session.events$.subscribe((event) => {
        if (!seen && event.type === "message.delta") {
          seen = true;
          first.push(performance.now() - at);
        }
      });
      await session.prompt("go");
      subscription.unsubscribe();
    }),
  );
  const totalMs = performance.now() - started;
  await harness.close();
  rmSync(dir, { recursive: true, force: true });
  return { first, totalMs };
}

export default async function httpLoad(): Promise<void> {
  const model = await startOpenAIServer({
    // T-1 tool turns, then a text answer: counted from the tool results the request carries.
    respond: (request) => {
      const results = ((request.body?.messages ?? []) as { role: string }[]).filter((message) => message.role === "tool").length;
      return results < TURNS - 1 ? toolCallResponse([{ id: `call_${results}`, name: "step", arguments: { n: results } }]) : textResponse("All steps done.");
    },
  });
  try {
    // Alternate the order over two rounds and keep each mode's second (warm) measurement.
    await viaLibrary(model.url);
    await viaHttp(model.url);
    const http = await viaHttp(model.url);
    const library = await viaLibrary(model.url);
    const row = (name: string, result: { first: number[]; totalMs: number }) =>
      `${name.padEnd(8)} first part median ${quantile(result.first, 0.5).toFixed(1)} ms, p99 ${quantile(result.first, 0.99).toFixed(1)} ms; total ${result.totalMs.toFixed(0)} ms`;
    console.log(`${STREAMS} concurrent streams x ${TURNS} tool turns`);
    console.log(row("http", http));
    console.log(row("library", library));
    console.log(JSON.stringify({ bench: "http-load", arbor: http.totalMs, baseline: library.totalMs, unit: "ms", ratio: http.totalMs / library.totalMs }));
  } finally {
    await model.close();
  }
}

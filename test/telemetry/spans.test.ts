/**
 * Spans and metrics of real harness runs through the real OpenTelemetry SDK
 * (sdk-trace-base's InMemorySpanExporter, sdk-metrics' MeterProvider), with the real
 * @ai-sdk/openai client talking to loopback OpenAI-wire servers: a run with a retried model
 * call, two parallel tool calls and a compaction between turns.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { MeterProvider, MetricReader, type HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import type { TelemetryOptions } from "../../src/telemetry/options.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";

const SECRET = "sk-live-TOPSECRET-4f9a2c";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

class TestReader extends MetricReader {
  protected onShutdown = async () => undefined;
  protected onForceFlush = async () => undefined;
}

/** Two tools that each wait until both have started: the batch only finishes if they run in parallel. */
function parallelTools() {
  let arrived = 0;
  let release!: () => void;
  const bothStarted = new Promise<void>((resolve) => (release = resolve));
  const make = (name: string) =>
    defineTool({
      name,
      description: `Read ${name}`,
      parameters: z.object({ path: z.string() }),
      async execute(args) {
        arrived += 1;
        if (arrived === 2) release();
        const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the other tool never started: not parallel")), 10_000).unref());
        await Promise.race([bothStarted, timeout]);
        // The tool echoes a secret (as a model's bash might read a key): it must reach no span.
        return { content: [{ type: "text", text: `${args.path} key=${SECRET} ` + "x".repeat(12_000) }] };
      },
    });
  return [make("read_a"), make("read_b")];
}

describe("telemetry spans of a real run", { timeout: 60_000 }, () => {
  let server: OpenAIServer;
  let summarizer: OpenAIServer;
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(async () => {
    [server, summarizer] = await Promise.all([
      startOpenAIServer(),
      startOpenAIServer({ respond: () => textResponse("## Goal\nRead both files.", { usage: { input: 300, output: 20 } }) }),
    ]);
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await tracerProvider.shutdown();
    await Promise.all([server?.close(), summarizer?.close()]);
  });

  async function runScenario(telemetry: TelemetryOptions, promptText = "Read a.txt and b.txt") {
    exporter.reset();
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    server.script(
      errorResponse(503, { error: { message: `overloaded (key ${SECRET})`, type: "server_error" } }),
      toolCallResponse(
        [
          { id: "call_a", name: "read_a", arguments: { path: "a.txt" } },
          { id: "call_b", name: "read_b", arguments: { path: "b.txt" } },
        ],
        { usage: { input: 120, output: 30, cached: 40 } },
      ),
      textResponse("Both files read.", { usage: { input: 200, output: 10 } }),
    );
    const harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: SECRET, api: "chat" }), contextWindow: 6000 } },
      tools: parallelTools(),
      retry: { baseDelayMs: 1 },
      secrets: [SECRET],
      compaction: {
        reserveTokens: 1500,
        keepRecentTokens: 2000,
        summarizationModel: createOpenAIModel({ modelId: "gpt-summary", baseURL: summarizer.url, apiKey: SECRET, api: "chat" }),
      },
      telemetry: { tracerProvider, meterProvider, ...telemetry },
    });
    try {
      const outcome = await harness.prompt(promptText, [], { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: "vendor=abc" });
      expect(outcome.status).toBe("done");
      const sessionId = harness.id;
      const collected = await reader.collect();
      return { spans: exporter.getFinishedSpans(), sessionId, metrics: collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics) };
    } finally {
      await harness.close();
      await meterProvider.shutdown();
    }
  }

  const byName = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const allStrings = (spans: ReadableSpan[]) =>
    spans.flatMap((span) => [span.name, span.status.message ?? "", ...Object.entries(span.attributes).flatMap(([key, value]) => [key, JSON.stringify(value)])]);

  it("builds invoke_agent → chat attempts, parallel execute_tool spans and a compaction holding its chat, all in the caller's trace", async () => {
    const { spans, sessionId, metrics } = await runScenario({});
    const [agent] = byName(spans, "invoke_agent arbor");
    expect(agent).toBeDefined();
    expect(agent.kind).toBe(SpanKind.INTERNAL);
    // The prompt's traceparent: every span shares its trace id; the run's root is the caller's span's child.
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([TRACE_ID]));
    expect(parentOf(agent)).toBe(PARENT_ID);
    expect(agent.spanContext().traceState?.get("vendor")).toBe("abc");
    expect(agent.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "openai",
      "gen_ai.agent.name": "arbor",
      "gen_ai.conversation.id": sessionId,
      "gen_ai.request.model": "gpt-test",
      "openinference.span.kind": "AGENT",
      "agent.name": "arbor",
      "session.id": sessionId,
      "arbor.run.status": "done",
    });
    expect(agent.attributes["gen_ai.agent.id"]).toBeUndefined();

    // Three model calls of the run: the 503 attempt, its retry (tool calls), the final answer.
    const chats = byName(spans, "chat gpt-test").sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(chats).toHaveLength(3);
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(chat)).toBe(agent.spanContext().spanId);
    }
    const [failed, retried, final] = chats;
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.attributes["error.type"]).toBe("503");
    expect(failed.attributes["arbor.retry.attempt"]).toBeUndefined();
    expect(retried.attributes["arbor.retry.attempt"]).toBe(1);
    expect(retried.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(retried.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-test",
      "gen_ai.response.model": "gpt-test",
      "gen_ai.response.finish_reasons": ["tool_calls"],
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 30,
      "gen_ai.usage.cache_read.input_tokens": 40,
      "openinference.span.kind": "LLM",
      "llm.model_name": "gpt-test",
      "llm.provider": "openai",
      "llm.token_count.prompt": 120,
      "llm.token_count.completion": 30,
      "llm.token_count.total": 150,
      "llm.token_count.prompt_details.cache_read": 40,
    });
    expect(typeof retried.attributes["gen_ai.response.id"]).toBe("string");
    expect(final.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);

    // Parallel tools: sibling spans under the run, overlapping in time.
    const tools = [...byName(spans, "execute_tool read_a"), ...byName(spans, "execute_tool read_b")];
    expect(tools).toHaveLength(2);
    for (const tool of tools) {
      expect(tool.kind).toBe(SpanKind.INTERNAL);
      expect(parentOf(tool)).toBe(agent.spanContext().spanId);
      expect(tool.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function", "openinference.span.kind": "TOOL", "arbor.tool.outcome": "succeeded" });
    }
    expect(tools.map((tool) => tool.attributes["gen_ai.tool.call.id"]).sort()).toEqual(["call_a", "call_b"]);
    expect(tools.map((tool) => tool.attributes["tool.id"]).sort()).toEqual(["call_a", "call_b"]);
    const ns = (time: [number, number]) => BigInt(time[0]) * 1_000_000_000n + BigInt(time[1]);
    // The SDK anchors each span's start at Date.now() (whole milliseconds) and adds a monotonic
    // duration for its end, so two spans' times compare exactly only to within one millisecond.
    const ANCHOR = 1_000_000n;
    expect(ns(tools[0].startTime) < ns(tools[1].endTime) + ANCHOR && ns(tools[1].startTime) < ns(tools[0].endTime) + ANCHOR).toBe(true);

    // The compaction between turns: an operation span under the run, holding the summary calls.
    const [compaction] = byName(spans, "arbor.compaction");
    expect(compaction).toBeDefined();
    expect(parentOf(compaction)).toBe(agent.spanContext().spanId);
    expect(compaction.attributes).toMatchObject({ "arbor.compaction.reason": "threshold", "openinference.span.kind": "CHAIN" });
    const summaries = byName(spans, "chat gpt-summary");
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    for (const summary of summaries) expect(parentOf(summary)).toBe(compaction.spanContext().spanId);
    expect(ns(compaction.startTime) + ANCHOR > ns(retried.endTime) && ns(compaction.endTime) < ns(final.startTime) + ANCHOR).toBe(true);
    // The order itself, exactly: the compaction span ends before the final answer's span starts.
    const finishedOrder = spans.map((span) => span.name);
    expect(finishedOrder.indexOf("arbor.compaction")).toBeLessThan(finishedOrder.lastIndexOf("chat gpt-test"));

    // Usage summed over every model call of the run, the compaction's included.
    expect(agent.attributes["gen_ai.usage.input_tokens"]).toBe(320 + 300 * summaries.length);

    // Content is off by default, and the secret is nowhere (not in attributes, not in status messages).
    for (const span of spans) {
      for (const key of Object.keys(span.attributes)) expect(key).not.toMatch(/messages|tool\.call\.(arguments|result)|input\.value|output\.value|system_instructions/);
    }
    expect(allStrings(spans).filter((text) => text.includes(SECRET))).toEqual([]);
    expect(failed.status.message).toBe("503"); // content-free by default: the error type, never the text

    // Metrics: one duration per model call, input and output token counts.
    const duration = metrics.find((metric) => metric.descriptor.name === "gen_ai.client.operation.duration") as HistogramMetricData;
    const usage = metrics.find((metric) => metric.descriptor.name === "gen_ai.client.token.usage") as HistogramMetricData;
    expect(duration.descriptor.unit).toBe("s");
    const calls = duration.dataPoints.reduce((sum, point) => sum + point.value.count, 0);
    expect(calls).toBe(3 + summaries.length);
    expect(duration.dataPoints.some((point) => point.attributes["error.type"] === "503")).toBe(true);
    const inputTokens = usage.dataPoints.filter((point) => point.attributes["gen_ai.token.type"] === "input" && point.attributes["gen_ai.request.model"] === "gpt-test");
    expect(inputTokens.reduce((sum, point) => sum + (point.value.sum ?? 0), 0)).toBe(320);
  });

  it("captures messages and tool arguments and results only when asked, with the harness's secrets redacted", async () => {
    const { spans } = await runScenario({ captureContent: true }, `Read a.txt and b.txt; my key is ${SECRET}`);
    const [agent] = byName(spans, "invoke_agent arbor");
    expect(agent.attributes["input.value"]).toBe("Read a.txt and b.txt; my key is [redacted]");
    expect(agent.attributes["output.value"]).toBe("Both files read.");
    const chat = byName(spans, "chat gpt-test").find((span) => span.attributes["arbor.retry.attempt"] === 1)!;
    const input = JSON.parse(String(chat.attributes["gen_ai.input.messages"]));
    expect(input).toEqual([{ role: "user", parts: [{ type: "text", content: "Read a.txt and b.txt; my key is [redacted]" }] }]);
    const output = JSON.parse(String(chat.attributes["gen_ai.output.messages"]));
    expect(output[0]).toMatchObject({ role: "assistant", finish_reason: "tool_calls" });
    expect(output[0].parts).toContainEqual({ type: "tool_call", id: "call_a", name: "read_a", arguments: { path: "a.txt" } });
    expect(typeof chat.attributes["gen_ai.system_instructions"]).toBe("string");
    expect(chat.attributes["llm.input_messages.0.message.role"]).toBe("user");
    expect(chat.attributes["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"]).toBe("read_a");
    const [tool] = byName(spans, "execute_tool read_a");
    expect(JSON.parse(String(tool.attributes["gen_ai.tool.call.arguments"]))).toEqual({ path: "a.txt" });
    expect(String(tool.attributes["gen_ai.tool.call.result"])).toMatch(/^a\.txt key=\[redacted\] x+$/);
    expect(tool.attributes["output.value"]).toBe(tool.attributes["gen_ai.tool.call.result"]);
    expect(tool.attributes["tool.parameters"]).toBe(tool.attributes["gen_ai.tool.call.arguments"]);
    expect(allStrings(spans).filter((text) => text.includes(SECRET))).toEqual([]);
  });

  it("emits one namespace with gen_ai_only or openinference_only, from the same record", async () => {
    const genAi = await runScenario({ flavor: "gen_ai_only", captureContent: true });
    const keys = (spans: ReadableSpan[]) => spans.flatMap((span) => Object.keys(span.attributes));
    expect(keys(genAi.spans).some((key) => key.startsWith("gen_ai."))).toBe(true);
    expect(keys(genAi.spans).filter((key) => /^(openinference|llm|tool|input|output|session|agent)\./.test(key))).toEqual([]);
    const openInference = await runScenario({ flavor: "openinference_only", captureContent: true });
    expect(keys(openInference.spans).some((key) => key.startsWith("llm."))).toBe(true);
    expect(keys(openInference.spans).filter((key) => key.startsWith("gen_ai."))).toEqual([]);
    // Names and kinds do not depend on the flavor.
    const shape = (spans: ReadableSpan[]) => spans.map((span) => `${span.name}/${span.kind}`).sort();
    expect(shape(openInference.spans)).toEqual(shape(genAi.spans));
  });
});

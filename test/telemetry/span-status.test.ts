/**
 * Span status messages carry no content by default (a provider error quoting the prompt does
 * not reach the exporter), and a call waiting for approval is not an ERROR span: the run span
 * gets an event, and the run that continues after the decision links to the requesting run.
 * Real harness runs, the real OpenTelemetry SDK, the real @ai-sdk/openai client on loopback.
 */
import { SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";

const PROMPT = "the customer's private question about invoice 77123";

describe("span status and approvals in telemetry", { timeout: 60_000 }, () => {
  let server: OpenAIServer;
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await tracerProvider.shutdown();
    await server?.close();
  });

  const strings = (spans: ReadableSpan[]) => spans.flatMap((span) => [span.status.message ?? "", ...Object.values(span.attributes).map((value) => JSON.stringify(value)), ...span.events.flatMap((event) => [event.name, JSON.stringify(event.attributes ?? {})])]);

  for (const captureContent of [false, true]) {
    it(`a provider error quoting the prompt: the status messages hold ${captureContent ? "its redacted text (content capture on)" : "only the error class and code"}`, async () => {
      server.script(errorResponse(400, { error: { message: `invalid api key sk-abcdef123456 for ${PROMPT}`, type: "invalid_request_error" } }));
      const harness = await createHarness({
        eventLog: createMemoryEventLog(),
        models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "sk-abcdef123456", api: "chat" }) } },
        streamOptions: { maxRetries: 0 },
        telemetry: { tracerProvider, captureContent },
      });
      try {
        const outcome = await harness.prompt(PROMPT);
        expect(outcome.status).not.toBe("done");
      } finally {
        await harness.close();
      }
      const spans = exporter.getFinishedSpans();
      const chat = spans.find((span) => span.name.startsWith("chat "))!;
      const agent = spans.find((span) => span.name.startsWith("invoke_agent"))!;
      expect(chat.status.code).toBe(SpanStatusCode.ERROR);
      expect(agent.status.code).toBe(SpanStatusCode.ERROR);
      const texts = strings(spans).join("\n");
      expect(texts).not.toContain("sk-abcdef123456");
      if (captureContent) {
        expect(chat.status.message).toContain("invoice 77123");
      } else {
        expect(texts).not.toContain("invoice 77123");
        expect(chat.status.message).toBe("400");
        expect(agent.status.message).toMatch(/^failed: [A-Z_a-z0-9]+$/);
      }
    });
  }

  it("a call waiting for approval is a span event, not an ERROR span; the run after the decision links to the requesting run", async () => {
    server.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "a.txt" } }]), textResponse("read it"));
    const harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) } },
      streamOptions: { maxRetries: 0 },
      requireApproval: ["read"],
      tools: [defineTool({ name: "read", description: "Read a file", parameters: z.object({ path: z.string() }), execute: async ({ path }) => ({ content: [{ type: "text", text: `contents of ${path}` }] }) })],
      telemetry: { tracerProvider },
    });
    try {
      expect((await harness.prompt("read a.txt")).status).toBe("suspended");
      const first = exporter.getFinishedSpans();
      const requesting = first.find((span) => span.name.startsWith("invoke_agent"))!;
      expect(first.filter((span) => span.status.code === SpanStatusCode.ERROR).map((span) => [span.name, span.attributes["error.type"]])).toEqual([]);
      expect(requesting.events.map((event) => [event.name, event.attributes?.["gen_ai.tool.call.id"]])).toEqual([["arbor.approval.requested", "call_1"]]);
      const waiting = first.find((span) => span.name === "execute_tool read");
      if (waiting) expect(waiting.attributes["arbor.tool.outcome"]).toBe("awaiting_approval");

      exporter.reset();
      await harness.approve("call_1");
      expect((await harness.continue()).status).toBe("done");
      const second = exporter.getFinishedSpans();
      const resumed = second.find((span) => span.name.startsWith("invoke_agent"))!;
      expect(resumed.spanContext().spanId).not.toBe(requesting.spanContext().spanId);
      expect(resumed.links.map((link) => [link.context.traceId, link.context.spanId, link.attributes?.["arbor.link.type"]])).toEqual([[requesting.spanContext().traceId, requesting.spanContext().spanId, "approval.requested"]]);
      expect(second.filter((span) => span.status.code === SpanStatusCode.ERROR)).toEqual([]);
    } finally {
      await harness.close();
    }
  });
});

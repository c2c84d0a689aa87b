/**
 * W3C trace context given with a prompt: the parser's rules, and a real run with an invalid
 * `traceparent` (reported, new trace) through the real SDK.
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { parseTraceContext } from "../../src/telemetry/trace-context.ts";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("parseTraceContext", () => {
  it("accepts version 00 and later versions, keeps a valid tracestate, drops an unparsable one", () => {
    const parsed = parseTraceContext({ traceparent: VALID, tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7" });
    const spanContext = trace.getSpanContext(parsed.context!)!;
    expect(spanContext).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1, isRemote: true });
    expect(spanContext.traceState?.get("rojo")).toBe("00f067aa0ba902b7");
    expect(parseTraceContext({ traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future" }).context).toBeDefined();
    expect(trace.getSpanContext(parseTraceContext({ traceparent: VALID, tracestate: "=,,bad key=" }).context!)?.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(parseTraceContext(undefined)).toEqual({});
  });

  it.each([
    ["garbage", /not version-traceid-parentid-flags/],
    ["00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", /not version-traceid-parentid-flags/],
    ["ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", /forbidden version ff/],
    ["00-00000000000000000000000000000000-00f067aa0ba902b7-01", /all-zero/],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", /all-zero/],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", /extra fields/],
  ])("refuses %s, saying why", (traceparent, why) => {
    const parsed = parseTraceContext({ traceparent });
    expect(parsed.context).toBeUndefined();
    expect(parsed.invalid).toMatch(why);
  });
});

describe("an invalid traceparent with a prompt", () => {
  let server: OpenAIServer;
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it("is reported as a warning, marked on the root span, and the run starts a new trace", async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    server.script(textResponse("one"), textResponse("two"));
    const harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: { main: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }) },
      telemetry: { tracerProvider },
    });
    try {
      expect((await harness.prompt("hi", [], { traceparent: "00-zz-not-a-trace" })).status).toBe("done");
      expect((await harness.prompt("again", [], { traceparent: VALID })).status).toBe("done");
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
      await harness.close();
    }
    const agents = exporter.getFinishedSpans().filter((span) => span.name === "invoke_agent arbor");
    expect(agents).toHaveLength(2);
    const [first, second] = agents;
    expect(first.parentSpanContext).toBeUndefined();
    expect(first.attributes["arbor.trace_context.invalid"]).toMatch(/not version-traceid-parentid-flags/);
    expect(first.spanContext().traceId).not.toBe(second.spanContext().traceId);
    expect(second.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    const runSpans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === first.spanContext().traceId);
    expect(runSpans.map((span) => span.name).sort()).toEqual(["chat gpt-test", "invoke_agent arbor"]);
    expect(warnings.filter((warning) => (warning as { code?: string }).code === "INVALID_TRACE_CONTEXT")).toHaveLength(1);
    await tracerProvider.shutdown();
  });
});

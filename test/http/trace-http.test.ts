/**
 * W3C trace context per HTTP request: a chat POST with `traceparent` / `tracestate` makes every
 * span of the run it starts share the caller's trace id (real OTel SDK, in-memory exporter);
 * an invalid one is reported (response header, span attribute) and the run starts a new trace.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer, type ChatServer } from "../../src/http/node-adapter.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID = "b7ad6b7169203331";

let dir: string;
let model: OpenAIServer;
let harness: AgentHarness;
let server: ChatServer;
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "arbor-trace-http-"));
  model = await startOpenAIServer();
  harness = await createHarness({
    eventLogPath: join(dir, "arbor.db"),
    cwd: dir,
    models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: model.url, apiKey: "test", api: "chat" }) } },
    streamOptions: { maxRetries: 0 },
    telemetry: { tracerProvider },
    tools: [defineTool({ name: "read", description: "Read a file", parameters: z.object({ path: z.string() }), execute: async ({ path }) => ({ content: [{ type: "text", text: `contents of ${path}` }] }) })],
  });
  server = await startChatServer({ handler: createChatHandler({ harness, cwd: dir }) });
});
afterAll(async () => {
  await server?.close();
  await harness?.close();
  await tracerProvider.shutdown();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(id: string, headers: Record<string, string>) {
  model.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "a.txt" } }]), textResponse("Read it."));
  exporter.reset();
  const response = await fetch(`${server.url}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ id, messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "read a.txt" }] }], trigger: "submit-message" }),
  });
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('"type":"finish"');
  await harness.openSession(id).then((session) => session.waitForIdle());
  const spans = exporter.getFinishedSpans();
  expect(spans.map((span) => span.name).sort()).toEqual(["chat gpt-test", "chat gpt-test", "execute_tool read", "invoke_agent arbor"]);
  return { response, spans };
}

describe("traceparent on a chat POST", () => {
  it("puts every span of the run into the caller's trace, under the caller's span, with its tracestate", async () => {
    const { response, spans } = await post("traced", { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: "vendor=xyz" });
    expect(response.headers.get("arbor-trace-context-invalid")).toBeNull();
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([TRACE_ID]));
    const root = spans.find((span) => span.name === "invoke_agent arbor")!;
    expect(root.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(root.spanContext().traceState?.get("vendor")).toBe("xyz");
    expect(root.attributes["arbor.trace_context.invalid"]).toBeUndefined();
  });

  it("reports an invalid traceparent and starts a new trace", async () => {
    const { response, spans } = await post("untraced", { traceparent: `00-${"0".repeat(32)}-${PARENT_ID}-01` });
    expect(response.headers.get("arbor-trace-context-invalid")).toMatch(/all-zero trace id/);
    const traceIds = new Set(spans.map((span) => span.spanContext().traceId));
    expect(traceIds.size).toBe(1);
    expect([...traceIds][0]).not.toBe("0".repeat(32));
    const root = spans.find((span) => span.name === "invoke_agent arbor")!;
    expect(root.parentSpanContext?.spanId).toBeUndefined();
    expect(String(root.attributes["arbor.trace_context.invalid"])).toMatch(/all-zero/);
  });
});

/**
 * The CLI's OTLP exporter end to end: the real `arbor run` in a child process, a loopback
 * OpenAI-wire server for the model, and a loopback OTLP/HTTP receiver in this test that
 * records what the real `@opentelemetry/exporter-trace-otlp-http` sends.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";

const KEY = "sk-cli-otlp-SECRET-91f3e0";
const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

describe("arbor run with OTEL_EXPORTER_OTLP_ENDPOINT", { timeout: 120_000 }, () => {
  let model: OpenAIServer;
  let receiver: Server;
  let endpoint: string;
  const bodies: { path: string; contentType: string | undefined; text: string; bytes: Buffer }[] = [];
  let dir: string;
  beforeAll(async () => {
    dir = tempDir("arbor-otlp-");
    writeFileSync(join(dir, "notes.txt"), "remember the milk\n");
    model = await startOpenAIServer();
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const bytes = Buffer.concat(chunks);
        bodies.push({ path: request.url ?? "", contentType: request.headers["content-type"], text: bytes.toString("utf8"), bytes });
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await model?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends the run's spans through the real OTLP/HTTP JSON exporter with OTEL_EXPORTER_OTLP_PROTOCOL=http/json, in the TRACEPARENT's trace, without the key", async () => {
    model.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "notes.txt" } }]), textResponse("It says to remember the milk."));
    const result = await runArbor(["--db", join(dir, "arbor.db"), "run", "--base-url", model.url, "--model", "openai:gpt-test", "--cwd", dir, "what do my notes say?"], {
      env: { OPENAI_API_KEY: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", TRACEPARENT: `00-${TRACE_ID}-b7ad6b7169203331-01` },
    });
    expect(result.stderr).not.toMatch(/could not export/);
    expect(result.code).toBe(0);
    const traces = bodies.filter((body) => body.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0].contentType).toMatch(/application\/json/);
    const spans: OtlpSpan[] = traces.flatMap((body) =>
      (JSON.parse(body.text) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)),
    );
    const names = spans.map((span) => span.name).sort();
    expect(names).toEqual(["chat gpt-test", "chat gpt-test", "execute_tool read", "invoke_agent arbor"]);
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([TRACE_ID]));
    const agent = spans.find((span) => span.name === "invoke_agent arbor")!;
    expect(agent.parentSpanId).toBe("b7ad6b7169203331");
    for (const span of spans.filter((other) => other !== agent)) expect(span.parentSpanId).toBe(agent.spanId);
    const attribute = (span: OtlpSpan, key: string) => span.attributes.find((item) => item.key === key)?.value;
    expect(attribute(agent, "gen_ai.operation.name")).toEqual({ stringValue: "invoke_agent" });
    expect(attribute(spans.find((span) => span.name === "execute_tool read")!, "gen_ai.tool.call.id")).toEqual({ stringValue: "call_1" });
    // Content is off unless asked for; the key is in no body.
    expect(traces.some((body) => body.text.includes("remember the milk"))).toBe(false);
    expect(traces.some((body) => body.text.includes(KEY))).toBe(false);
  });

  it("sends protobuf bodies through the real OTLP/HTTP protobuf exporter when OTEL_EXPORTER_OTLP_PROTOCOL is unset (the spec's default)", async () => {
    model.script(textResponse("Hello."));
    const before = bodies.length;
    const result = await runArbor(["--db", join(dir, "arbor.db"), "run", "--base-url", model.url, "--model", "openai:gpt-test", "--cwd", dir, "hi"], {
      env: { OPENAI_API_KEY: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACEPARENT: `00-${TRACE_ID}-b7ad6b7169203331-01` },
    });
    expect(result.stderr).not.toMatch(/could not export/);
    expect(result.code).toBe(0);
    const traces = bodies.slice(before).filter((body) => body.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    expect(traces[0].contentType).toBe("application/x-protobuf");
    const all = Buffer.concat(traces.map((body) => body.bytes));
    // Protobuf: names are length-prefixed UTF-8, trace ids their 16 raw bytes; it is not JSON.
    expect(() => JSON.parse(traces[0].text)).toThrow();
    for (const name of ["invoke_agent arbor", "chat gpt-test"]) expect(all.includes(Buffer.from(name))).toBe(true);
    expect(all.includes(Buffer.from(TRACE_ID, "hex"))).toBe(true);
    expect(all.includes(Buffer.from(KEY))).toBe(false);
  });

  it("refuses a protocol it cannot speak, naming it (exit 2)", async () => {
    const result = await runArbor(["--db", join(dir, "arbor.db"), "run", "--base-url", model.url, "--model", "openai:gpt-test", "--cwd", dir, "hi"], {
      env: { OPENAI_API_KEY: KEY, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not supported.*http\/protobuf.*http\/json/);
  });
});

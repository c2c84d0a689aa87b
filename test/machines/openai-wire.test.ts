/**
 * The loop over real HTTP: the real @ai-sdk/openai client (createOpenAIModel) against
 * the loopback OpenAI-wire server. Parallel tool calls reach the model back in call
 * order; 429 with retry-after-ms is retried after the server's delay; HTTP 400 ends the
 * run failed with a persisted error message and no retry.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { errorResponse, startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/openai-server.ts";
import { memorySession, sessionEvents, sleepTool } from "./helpers.ts";

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(api: "chat" | "responses" = "chat") {
  server = await startOpenAIServer();
  const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api });
  return { server, model, ...(await memorySession()) };
}

describe("the loop over the real OpenAI client", () => {
  it.each(["chat", "responses"] as const)("runs parallel tool calls and sends results back in call order (%s)", async (api) => {
    const { server, model, session } = await setup(api);
    server.script(
      toolCallResponse([
        { id: "call_slow", name: "slow", arguments: { ms: 40 } },
        { id: "call_fast", name: "fast", arguments: { ms: 1 } },
      ]),
      textResponse("both done"),
    );
    const outcome = await createAgent({ session, model, tools: [sleepTool("slow"), sleepTool("fast")] }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(outcome.lastAssistant?.content).toEqual([expect.objectContaining({ type: "text", text: "both done" })]);
    const body = JSON.stringify(server.requests[1].body);
    expect(body.indexOf("slow slept 40")).toBeGreaterThan(-1);
    expect(body.indexOf("slow slept 40")).toBeLessThan(body.indexOf("fast slept 1"));
  });

  it("retries a 429 after the server's retry-after-ms and appends one assistant message", async () => {
    const { server, model, session, log } = await setup();
    server.script(errorResponse(429, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, { "retry-after-ms": "30" }), textResponse("after the wait"));
    const outcome = await createAgent({ session, model, retry: { baseDelayMs: 1, maxDelayMs: 1000 } }).prompt("go");
    expect(outcome.status).toBe("done");
    expect(server.requests).toHaveLength(2);
    const scheduled = (await sessionEvents(log, session.id)).find((e) => e.type === "retry.scheduled");
    expect(scheduled?.data).toMatchObject({ attempt: 1, delayMs: 30, status: 429 });
    expect(session.view.buildContext().messages.filter((m) => m.role === "assistant")).toHaveLength(1);
  });

  it("a 429 asking for 3,600 s is not waited for (cap 60 s by default) and the failure says what the server asked", async () => {
    const { server, model, session } = await setup();
    server.script(errorResponse(429, { error: { message: "slow down", type: "rate_limit_error" } }, { "retry-after": "3600" }));
    const outcome = await createAgent({ session, model }).prompt("go");
    expect(outcome.status).toBe("failed");
    expect(server.requests).toHaveLength(1);
    const last = session.view.buildContext().messages.at(-1) as { errorMessage: string };
    expect(last.errorMessage).toMatch(/^429 slow down \(the server asked to wait 3600000 ms \(3600 s\), more than the maximum retry delay of 60000 ms/);
  });

  it("ends the run failed on HTTP 400, persists the error message and does not retry", async () => {
    const { server, model, session } = await setup();
    server.script(errorResponse(400, { error: { message: "Invalid 'messages': bad", type: "invalid_request_error" } }));
    const outcome = await createAgent({ session, model }).prompt("go");
    expect(outcome.status).toBe("failed");
    expect(server.requests).toHaveLength(1);
    const last = session.view.buildContext().messages.at(-1);
    expect(last).toMatchObject({ role: "assistant", stopReason: "error" });
    expect((last as { errorMessage: string }).errorMessage).toMatch(/Invalid 'messages'/);
  });
});

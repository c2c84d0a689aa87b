/**
 * Differential test against pi 0.73.1: pi-ai's own OpenAI providers (openai-completions,
 * openai-responses) and Arbor's adapter read the same recorded streams from the same
 * loopback server; the resulting assistant messages must agree where pi is right.
 * Deliberate differences are asserted as such.
 */
import { stream as piStream } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/index.ts";
import type { AssistantMessage } from "../../src/core/messages.ts";
import type { OpenAIServer } from "../../src/testing/index.ts";
import { fixtureResponse, startOpenAIServer } from "../../src/testing/index.ts";
import { collect, fixture, userRequest } from "./helpers.ts";

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
});

const tool = { name: "weather", description: "weather", parameters: { type: "object", properties: {} } };

async function viaPi(name: string, api: "openai-completions" | "openai-responses"): Promise<AssistantMessage> {
  server.script(fixtureResponse(fixture(name)));
  const model = { id: "gpt-test", name: "test", api, provider: "openai", baseUrl: server.url, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128_000, maxTokens: 4096 };
  const events = piStream(model as never, { messages: [{ role: "user", content: "hi", timestamp: 0 }], tools: [tool as never] }, { apiKey: "test-key" });
  for await (const _event of events) {
    /* drain */
  }
  return (await events.result()) as unknown as AssistantMessage;
}

async function viaArbor(name: string, api: "chat" | "responses"): Promise<AssistantMessage> {
  server.script(fixtureResponse(fixture(name)));
  const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test-key", api });
  return (await collect(model, userRequest("hi", { tools: [tool] }))).message;
}

/** The semantic content: block kinds, text, thinking text, tool ids (pi's Responses ids are `call|item`), names, arguments. */
function semantic(message: AssistantMessage) {
  return {
    content: message.content.map((block) =>
      block.type === "text"
        ? { text: block.text }
        : block.type === "thinking"
          ? { thinking: block.thinking }
          : { id: block.id.split("|")[0], name: block.name, arguments: block.arguments },
    ),
    stopReason: message.stopReason,
    responseId: message.responseId,
  };
}

/** Our usage where known equals pi's; where ours is unknown (null), pi reports 0. */
function expectUsageAgrees(ours: AssistantMessage, pi: AssistantMessage): void {
  for (const key of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const) {
    expect(ours.usage[key] ?? 0, key).toBe(pi.usage[key]);
  }
}

describe("Chat Completions: Arbor agrees with pi-ai openai-completions", () => {
  it.each([
    "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin",
    "a247c49c5fcd492bfb7a02a3306ad615ed8d8f649888ebfddfbc3ee151f44d46.bin",
    "e2aad469b71d1d4894ff833ea147020a9d875eb7ce644a0ff355581690a4cbfd.bin",
    "4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.bin",
    "openai-text.chunks.txt",
    "deepseek-tool-call.chunks.txt",
    "alibaba-tool-call.chunks.txt",
    "xai-tool-call.chunks.txt",
    "anthropic-fallback-tool-call.sse",
    "azure-model-router.1.chunks.txt",
  ])("%s", async (name) => {
    const pi = await viaPi(name, "openai-completions");
    const ours = await viaArbor(name, "chat");
    expect(semantic(ours)).toEqual(semantic(pi));
    expect(ours.responseModel).toBe(pi.responseModel);
    expectUsageAgrees(ours, pi);
  });

  it("reasoning_content becomes thinking with pi's field-name signature (deepseek)", async () => {
    const ours = await viaArbor("deepseek-tool-call.chunks.txt", "chat");
    expect(ours.content[0]).toMatchObject({ type: "thinking", thinkingSignature: "reasoning_content", thinking: expect.stringMatching(/^The user is asking for the weather in San Francisco/) });
  });

  it("differs on purpose for a refusal: pi drops the text and says stop; Arbor keeps it and says error", async () => {
    const name = "173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.bin";
    const pi = await viaPi(name, "openai-completions");
    const ours = await viaArbor(name, "chat");
    expect(pi.content).toEqual([]);
    expect(pi.stopReason).toBe("stop");
    expect(ours.content).toEqual([{ type: "text", text: "I'm sorry, I can't assist with that request." }]);
    expect(ours.stopReason).toBe("error");
  });

  it("differs on purpose for unreported usage: pi says 0, Arbor says null", async () => {
    const pi = await viaPi("anthropic-fallback-tool-call.sse", "openai-completions");
    const ours = await viaArbor("anthropic-fallback-tool-call.sse", "chat");
    expect(pi.usage.totalTokens).toBe(0);
    expect(ours.usage.totalTokens).toBeNull();
  });
});

describe("Responses: Arbor agrees with pi-ai openai-responses", () => {
  it.each(["openai-client-tool-search.2.chunks.txt", "github-copilot-id-rotation.1.chunks.txt"])("%s", async (name) => {
    const pi = await viaPi(name, "openai-responses");
    const ours = await viaArbor(name, "responses");
    // Copilot rotates the response id too: pi keeps the last one (response.completed), the AI SDK the first (response.created).
    const withoutId = ({ responseId: _id, ...rest }: ReturnType<typeof semantic>) => rest;
    expect(withoutId(semantic(ours))).toEqual(withoutId(semantic(pi)));
    if (!name.includes("copilot")) expect(ours.responseId).toBe(pi.responseId);
    expectUsageAgrees(ours, pi);
  });

  it("a failed stream: both end in error with the provider's message", async () => {
    const pi = await viaPi("openai-error.1.chunks.txt", "openai-responses");
    const ours = await viaArbor("openai-error.1.chunks.txt", "responses");
    expect(pi.stopReason).toBe("error");
    expect(ours.stopReason).toBe("error");
    expect(ours.errorMessage).toContain(pi.errorMessage!);
  });
});

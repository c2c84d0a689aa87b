import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV3, MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { HarnessConfigError, ModelConfigError } from "../../src/core/errors.ts";
import type { ModelClient } from "../../src/core/model-stream.ts";
import { createModelRegistry } from "../../src/harness/model-registry.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { startOpenAIServer, textResponse } from "../../src/testing/index.ts";
import { collect, userRequest } from "../model/helpers.ts";

const client: ModelClient = {
  provider: "acme",
  modelId: "acme-1",
  api: "acme-api",
  contextWindow: 1000,
  async *stream() {},
};

describe("createModelRegistry", () => {
  it("wraps AI SDK models, keeps clients, and applies facts given beside a model", () => {
    const registry = createModelRegistry({
      mock: { model: new MockLanguageModelV4({ provider: "openai.chat", modelId: "gpt-x" }), contextWindow: 64_000, cost: { input: 1, output: 2 } },
      acme: client,
      big: { model: client, contextWindow: 2_000_000 },
    });
    expect(registry.names()).toEqual(["mock", "acme", "big"]);
    expect(registry.defaultName).toBe("mock");
    expect(registry.get("mock").client).toMatchObject({ provider: "openai", modelId: "gpt-x", contextWindow: 64_000, cost: { input: 1, output: 2 } });
    expect(registry.get("acme").client).toBe(client);
    expect(registry.get("big").client.contextWindow).toBe(2_000_000);
    expect(client.contextWindow).toBe(1000);
    expect(registry.findByModel({ provider: "acme", modelId: "acme-1" })?.name).toBe("acme");
    expect(registry.findByModel({ provider: "x", modelId: "y" })).toBeUndefined();
  });

  it("throws ModelConfigError naming the known models for an unknown name", () => {
    const registry = createModelRegistry({ acme: client }, "acme");
    expect(() => registry.get("nope")).toThrow(ModelConfigError);
    expect(() => registry.get("nope")).toThrow(/Registered models: acme/);
  });

  it("takes a spec-v3 model (a provider package of AI SDK 6) through ai's wrapLanguageModel and streams from it", async () => {
    const v3 = new MockLanguageModelV3({
      provider: "legacy.chat",
      modelId: "old-1",
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            const parts: LanguageModelV3StreamPart[] = [
              { type: "stream-start", warnings: [] },
              { type: "text-start", id: "t" },
              { type: "text-delta", id: "t", delta: "still here" },
              { type: "text-end", id: "t" },
              { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } } },
            ];
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      }),
    });
    const registry = createModelRegistry({ legacy: v3 });
    const { message } = await collect(registry.get("legacy").client, userRequest());
    expect(message.content).toEqual([{ type: "text", text: "still here" }]);
    expect(message.stopReason).toBe("stop");
    expect(v3.doStreamCalls).toHaveLength(1);
  });

  it("rejects an AI SDK spec-v2 model naming the field", () => {
    const legacy = { specificationVersion: "v2", provider: "old", modelId: "m", doStream: async () => ({}) };
    expect(() => createModelRegistry({ old: legacy as never })).toThrow(HarnessConfigError);
    expect(() => createModelRegistry({ old: legacy as never })).toThrow(/"models\.old"/);
  });

  it("a price given in a models entry counts for an Arbor model client, as for an AI SDK model", async () => {
    const server = await startOpenAIServer();
    server.script(textResponse("priced", { usage: { input: 1_000, output: 500 } }));
    const harness = await createHarness({
      eventLog: createMemoryEventLog(),
      models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" }), cost: { input: 2, output: 8 } } },
      streamOptions: { maxRetries: 0 },
    });
    try {
      const outcome = await harness.prompt("hello");
      expect(outcome.lastAssistant?.usage).toMatchObject({ input: 1_000, output: 500, cost: { input: 0.002, output: 0.004, total: 0.006 } });
      expect(harness.getStats().cost).toBeCloseTo(0.006, 9);
    } finally {
      await harness.close();
      await server.close();
    }
  });
});

/**
 * Session totals and cost for each provider's usage shape, through the harness: real
 * `@ai-sdk/openai`, `@ai-sdk/anthropic` and `@ai-sdk/google` clients against the loopback server,
 * a real SQLite log, a tool round per run. Prompt caching is where peers over-count 2–4×:
 * Anthropic reports cache reads and writes outside `input_tokens`, OpenAI and Gemini inside.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createModel, type ModelProvider } from "../../src/adapters/model/providers.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";

const COST = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
// Each turn's prompt in OpenAI's accounting: cached and written tokens are part of `input`.
const TURN_1 = { input: 12_000, cached: 10_000, cacheWrite: 1_200, output: 150 };
const TURN_2 = { input: 12_400, cached: 11_200, cacheWrite: 900, output: 60 };

const price = (tokens: { input: number; output: number; cacheRead: number; cacheWrite: number }) =>
  (tokens.input * COST.input + tokens.output * COST.output + tokens.cacheRead * COST.cacheRead + tokens.cacheWrite * COST.cacheWrite) / 1e6;

describe("getStats() totals and cost per provider usage shape", { timeout: 60_000 }, () => {
  let dir: string;
  let server: OpenAIServer;
  let harness: AgentHarness | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-provider-stats-"));
    server = await startOpenAIServer();
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [ModelProvider, { cacheWrite: boolean }][] = [
    ["openai", { cacheWrite: true }],
    ["anthropic", { cacheWrite: true }],
    ["google", { cacheWrite: false }],
  ];
  for (const [provider, shape] of cases) {
    it(`${provider}: input excludes the cache, cache reads and writes are counted once, cost is priced per part`, async () => {
      const turn = (usage: typeof TURN_1) => (shape.cacheWrite ? usage : { input: usage.input - usage.cacheWrite, cached: usage.cached, output: usage.output });
      server.script(toolCallResponse([{ id: "call_1", name: "lookup", arguments: { key: "a" } }], { usage: turn(TURN_1) }), textResponse("Found it.", { usage: turn(TURN_2) }));
      harness = await createHarness({
        eventLogPath: join(dir, "arbor.db"),
        cwd: dir,
        models: { main: createModel(provider, { modelId: `${provider}-test`, baseURL: server.url, apiKey: "test-key", cost: COST }) },
        tools: [defineTool({ name: "lookup", description: "Look a key up", parameters: z.object({ key: z.string() }), execute: async () => ({ content: [{ type: "text", text: "value" }] }) })],
      });
      const outcome = await harness.prompt("look a up");
      expect(outcome.status).toBe("done");
      expect(server.requests).toHaveLength(2);

      const written = shape.cacheWrite ? TURN_1.cacheWrite + TURN_2.cacheWrite : 0;
      const expected = {
        input: TURN_1.input - TURN_1.cached - TURN_1.cacheWrite + (TURN_2.input - TURN_2.cached - TURN_2.cacheWrite),
        output: TURN_1.output + TURN_2.output,
        cacheRead: TURN_1.cached + TURN_2.cached,
        cacheWrite: written,
      };
      const stats = harness.getStats();
      expect(stats.messages).toMatchObject({ user: 1, assistant: 2, toolResult: 1 });
      expect(stats.tokens).toEqual({
        input: expected.input,
        output: expected.output,
        cacheRead: expected.cacheRead,
        cacheWrite: shape.cacheWrite ? expected.cacheWrite : null,
        total: expected.input + expected.output + expected.cacheRead + expected.cacheWrite,
      });
      // The prompts were 24,400 tokens (minus Gemini's uncounted writes) and 210 out; a 2-4x over-count would show here.
      expect(stats.tokens.total).toBe(TURN_1.input + TURN_2.input + TURN_1.output + TURN_2.output - (shape.cacheWrite ? 0 : TURN_1.cacheWrite + TURN_2.cacheWrite));
      expect(stats.cost).toBeCloseTo(price(expected), 12);
    });
  }
});

/**
 * The first model call after reopening a session does not validate the history with zod again
 * (issue 17, P2c): a fresh prompt builder (what a reopened harness has) hands none of the
 * converter's messages to `validateModelPrompt` (the AI SDK's `modelMessageSchema`), yet a malformed message the
 * converter could only pass through from bad input is still handed to it and rejected with the
 * SDK's own `InvalidPromptError`; and the cheap check never accepts what the SDK's schema rejects.
 */
import { InvalidPromptError } from "@ai-sdk/provider";
import { modelMessageSchema } from "ai";
import { convertToLanguageModelPrompt } from "ai/internal";
import fc from "fast-check";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createPromptBuilder } from "../../src/adapters/model/incremental-prompt.ts";
import { conformsToModelMessage } from "../../src/adapters/model/prompt-shape.ts";
import { toModelMessages, type ModelTarget } from "../../src/adapters/model/to-model-messages.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { assistant } from "./helpers.ts";

import * as validation from "../../src/adapters/model/prompt-validation.ts";

vi.mock("../../src/adapters/model/prompt-validation.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/adapters/model/prompt-validation.ts")>();
  return { ...actual, validateModelPrompt: vi.fn(actual.validateModelPrompt) };
});
const standardize = vi.mocked(validation.validateModelPrompt);

const target: ModelTarget = { provider: "openai", api: "openai-responses", modelId: "gpt-test" };
const options = () => ({ supportedUrls: {}, abortSignal: new AbortController().signal });

/** A long history with every shape the converter emits: text, images, reasoning with signatures, tool calls, results (text, error, images), missing results. */
function history(turns: number): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: "user", content: turn % 5 === 0 ? [{ type: "text", text: `u${turn}` }, { type: "image", data: "aGk=", mimeType: "image/png" }] : `u${turn}`, timestamp: 0 });
    messages.push(
      assistant([
        { type: "thinking", thinking: `why ${turn}`, thinkingSignature: JSON.stringify({ type: "reasoning", id: `rs_${turn}`, encrypted_content: "enc" }) },
        { type: "text", text: `t${turn}` },
        { type: "toolCall", id: `call_${turn}|fc_${turn}`, name: "read", arguments: { path: `f${turn}`, n: turn } },
        { type: "toolCall", id: `call_${turn}b`, name: "grep", arguments: {} },
      ]),
    );
    messages.push({
      role: "toolResult",
      toolCallId: `call_${turn}|fc_${turn}`,
      toolName: "read",
      content: turn % 3 === 0 ? [{ type: "text", text: "shot" }, { type: "image", data: "aGk=", mimeType: "image/png" }] : [{ type: "text", text: `r${turn}` }],
      isError: turn % 4 === 0,
      timestamp: 0,
    });
  }
  messages.push({ role: "user", content: "next", timestamp: 0 });
  return messages;
}

async function reference(system: string | undefined, messages: readonly AgentMessage[]) {
  return convertToLanguageModelPrompt({ prompt: { instructions: system, messages: toModelMessages(messages, target) }, supportedUrls: {}, download: undefined, abortSignal: new AbortController().signal });
}

beforeEach(() => {
  standardize.mockClear();
});

describe("prompt validation after reopening", () => {
  it("hands none of a reopened session's converted history to standardizePrompt, and gives the same prompt", async () => {
    const messages = history(300);
    const prompt = await createPromptBuilder(target).build("sys", messages, options());
    expect(standardize).not.toHaveBeenCalled();
    expect(prompt).toEqual(await reference("sys", messages));
  });

  it("still hands a malformed message to standardizePrompt, alone, and rejects with the SDK's InvalidPromptError", async () => {
    const bad = { role: "user", content: [{ type: "image", data: 42, mimeType: "image/png" }], timestamp: 0 } as unknown as AgentMessage;
    const badCall = assistant([{ type: "toolCall", id: "c1", name: 7 as unknown as string, arguments: {} }]);
    const answer: AgentMessage = { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "r" }], isError: false, timestamp: 0 };
    const badText = assistant([{ type: "text", text: 42 as unknown as string }]);
    for (const seeded of [[bad], [badCall, answer], [badText]]) {
      standardize.mockClear();
      const messages = [...history(200), ...seeded, { role: "user", content: "after", timestamp: 0 } as AgentMessage];
      const failure = await createPromptBuilder(target).build(undefined, messages, options()).catch((error: unknown) => error);
      expect(InvalidPromptError.isInstance(failure)).toBe(true);
      expect(String((failure as Error).message)).toMatch(/ModelMessage\[\] schema/);
      expect(standardize).toHaveBeenCalledTimes(1);
      expect(standardize.mock.calls[0]?.[1]).toHaveLength(1);
    }
    await expect(createPromptBuilder(target).build(undefined, [], options())).rejects.toThrow(/messages must not be empty/);
  });

  it("never accepts a message the SDK's schema rejects (one leaf of a converted message replaced by a random value)", async () => {
    const converted = toModelMessages(history(12), target);
    const leaves: { message: number; path: (string | number)[] }[] = [];
    const walk = (value: unknown, message: number, path: (string | number)[]) => {
      leaves.push({ message, path });
      if (typeof value === "object" && value !== null) for (const [key, item] of Object.entries(value)) walk(item, message, [...path, Array.isArray(value) ? Number(key) : key]);
    };
    converted.forEach((message, index) => walk(message, index, []));
    const leaf = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(undefined), fc.constant(null), fc.boolean(), fc.constant({}), fc.constant([]), fc.constant(new Map()), fc.constant(new Uint8Array(2)), fc.constant({ a: Number.NaN }), fc.constant({ a: { b: Infinity } }), fc.constantFrom("text", "image", "reasoning", "tool-call", "tool-result", "file", "image-data", "media", "json", "error-text", "content", "user", "assistant", "tool", "system"));
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.nat(leaves.length - 1), leaf, async (which, value) => {
        const { message, path } = leaves[which]!;
        const candidate: unknown = structuredClone(converted[message]);
        if (path.length === 0) return;
        let parent = candidate as Record<string | number, unknown>;
        for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
        parent[path[path.length - 1]!] = value;
        if (!conformsToModelMessage(candidate as never)) return;
        accepted++;
        await expect(modelMessageSchema.parseAsync(candidate)).resolves.toBeDefined();
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});

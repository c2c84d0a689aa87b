/**
 * Property test of the ModelClient stream contract over arbitrary (even ill-ordered)
 * AI SDK part sequences: never throws, one terminal event last, deltas add up to the
 * blocks, one block per tool-call id with exactly one toolcall-end.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createAiSdkModelClient } from "../../src/adapters/model/index.ts";
import type { ModelStreamEvent } from "../../src/core/model-stream.ts";
import { scriptedModel } from "../../src/testing/index.ts";
import { userRequest } from "./helpers.ts";

const textId = fc.constantFrom("t1", "t2");
const toolId = fc.constantFrom("a", "b", "c");
const piece = fc.constantFrom("", "x", "yz", '{"k":', "1}", " ");

const part: fc.Arbitrary<LanguageModelV4StreamPart> = fc.oneof(
  textId.map((id) => ({ type: "text-start" as const, id })),
  fc.tuple(textId, piece).map(([id, delta]) => ({ type: "text-delta" as const, id, delta })),
  textId.map((id) => ({ type: "text-end" as const, id })),
  textId.map((id) => ({ type: "reasoning-start" as const, id: `r${id}` })),
  fc.tuple(textId, piece).map(([id, delta]) => ({ type: "reasoning-delta" as const, id: `r${id}`, delta })),
  textId.map((id) => ({ type: "reasoning-end" as const, id: `r${id}` })),
  toolId.map((id) => ({ type: "tool-input-start" as const, id, toolName: `tool_${id}` })),
  fc.tuple(toolId, piece).map(([id, delta]) => ({ type: "tool-input-delta" as const, id, delta })),
  toolId.map((id) => ({ type: "tool-input-end" as const, id })),
  fc.tuple(toolId, fc.constantFrom("", '{"v":2}', "nope")).map(([id, input]) => ({ type: "tool-call" as const, toolCallId: id, toolName: `tool_${id}`, input })),
  fc.constant({ type: "response-metadata" as const, id: "resp_1", modelId: "m" }),
);

const finish: LanguageModelV4StreamPart = {
  type: "finish",
  finishReason: { unified: "stop", raw: "stop" },
  usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } },
};

describe("stream contract over arbitrary part sequences", () => {
  it("holds for every generated sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 25 }), fc.constantFrom("finish", "none", "error"), async (parts, ending) => {
        const script = [...parts, ...(ending === "finish" ? [finish] : ending === "error" ? [{ type: "error" as const, error: new Error("mid-stream") }, finish] : [])];
        const events: ModelStreamEvent[] = [];
        for await (const event of createAiSdkModelClient(scriptedModel([script])).stream(userRequest(), {})) events.push(event);

        expect(events[0].type).toBe("start");
        const terminal = events[events.length - 1];
        expect(["done", "error"]).toContain(terminal.type);
        expect(events.filter((event) => event.type === "done" || event.type === "error")).toHaveLength(1);
        if (terminal.type !== "done" && terminal.type !== "error") return;
        const message = terminal.message;
        if (ending !== "finish") expect(terminal.type).toBe("error");

        const texts = new Map<number, string>();
        const toolEnds = new Map<string, number>();
        for (const event of events.slice(0, -1)) {
          expect((event as { partial: unknown }).partial).toBe(message);
          if (event.type === "text-delta" || event.type === "thinking-delta") texts.set(event.contentIndex, (texts.get(event.contentIndex) ?? "") + event.delta);
          if (event.type === "toolcall-delta") expect(message.content[event.contentIndex]).toMatchObject({ type: "toolCall", id: event.id });
          if (event.type === "toolcall-end") toolEnds.set(event.toolCall.id, (toolEnds.get(event.toolCall.id) ?? 0) + 1);
        }
        message.content.forEach((block, index) => {
          if (block.type === "text") {
            expect(block.text.length).toBeGreaterThan(0);
            expect(texts.get(index)).toBe(block.text);
          } else if (block.type === "thinking") {
            expect(texts.get(index) ?? "").toBe(block.thinking);
          } else {
            expect(toolEnds.get(block.id)).toBe(1);
            expect(typeof block.arguments).toBe("object");
          }
        });
        const ids = message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : []));
        expect(new Set(ids).size).toBe(ids.length);
      }),
      { numRuns: 300 },
    );
  });
});

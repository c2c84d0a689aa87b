/**
 * The incremental prompt builder (issue 17) gives exactly the prompt a full conversion gives
 * (toModelMessages → standardizePrompt → convertToLanguageModelPrompt) at every step of a growing
 * conversation, reuses the converted prefix by identity, starts again when the prefix changes,
 * keeps two conversations on one client apart, and rejects a malformed message on every call.
 */
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPromptBuilder } from "../../src/adapters/model/incremental-prompt.ts";
import { toModelMessages, type ModelTarget } from "../../src/adapters/model/to-model-messages.ts";
import { convertToLlm } from "../../src/core/convert-to-llm.ts";
import type { AgentMessage, ToolResultMessage } from "../../src/core/messages.ts";
import { assistant } from "./helpers.ts";

const target: ModelTarget = { provider: "openai", api: "openai-responses", modelId: "gpt-test" };
const options = () => ({ supportedUrls: {}, abortSignal: new AbortController().signal });

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });
const result = (toolCallId: string, text: string): ToolResultMessage => ({
  role: "toolResult",
  toolCallId,
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 0,
});
const call = (id: string) => ({ type: "toolCall" as const, id, name: "read", arguments: { path: id } });

async function reference(system: string | undefined, messages: readonly AgentMessage[]) {
  const standardized = await standardizePrompt({ system, messages: toModelMessages(messages, target) });
  return convertToLanguageModelPrompt({ prompt: standardized, supportedUrls: {}, download: undefined, abortSignal: new AbortController().signal });
}

/** A conversation: user turns, assistants with 0–2 tool calls, results (some missing, some late), errored assistants, compaction summaries. */
function conversation(steps: number[]): AgentMessage[] {
  const messages: AgentMessage[] = [];
  let calls = 0;
  for (const [index, step] of steps.entries()) {
    const kind = step % 7;
    if (kind === 0) messages.push(user(`u${index}`));
    else if (kind === 1) messages.push(assistant([{ type: "text", text: `a${index}` }]));
    else if (kind === 2 || kind === 3) {
      const ids = Array.from({ length: kind - 1 }, () => `c${calls++}`);
      messages.push(assistant([{ type: "text", text: `t${index}` }, ...ids.map(call)]));
      for (const id of ids.slice(0, step % 3 === 0 ? ids.length - 1 : ids.length)) messages.push(result(id, `r${id}`));
    } else if (kind === 4) messages.push(assistant([{ type: "text", text: "partial" }], { stopReason: "error", errorMessage: "boom" }));
    else if (kind === 5) messages.push({ role: "compactionSummary", summary: `s${index}`, tokensBefore: 10, timestamp: 0 });
    else messages.push(result(`c${Math.max(0, calls - 1)}`, "late"));
  }
  return messages;
}

describe("createPromptBuilder", () => {
  it("equals a full conversion at every step of a growing conversation, and reuses the prefix's prompt objects", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(100), { minLength: 1, maxLength: 30 }), fc.boolean(), async (steps, withSystem) => {
        const builder = createPromptBuilder(target);
        const all = conversation([0, ...steps]);
        const system = withSystem ? "sys" : undefined;
        let previous: Awaited<ReturnType<typeof reference>> | undefined;
        for (let length = 1; length <= all.length; length++) {
          const messages = convertToLlm(all.slice(0, length));
          const prompt = await builder.build(system, messages, options());
          expect(prompt).toEqual(await reference(system, messages));
          if (previous && previous.length > 3 && prompt.length >= previous.length) expect(prompt[withSystem ? 1 : 0]).toBe(previous[withSystem ? 1 : 0]);
          previous = prompt;
        }
      }),
      { numRuns: 40 },
    );
  });

  it("starts again when the prefix changes (compaction, an edited message) and keeps two conversations apart", async () => {
    const builder = createPromptBuilder(target);
    const first = [user("hello"), assistant([call("a1")]), result("a1", "A"), assistant([{ type: "text", text: "done" }]), user("more")];
    const second = [user("other"), assistant([{ type: "text", text: "hi" }]), user("again")];
    for (let round = 0; round < 3; round++) {
      expect(await builder.build(undefined, first, options())).toEqual(await reference(undefined, first));
      expect(await builder.build(undefined, second, options())).toEqual(await reference(undefined, second));
    }
    const edited = [...first.slice(0, 2), result("a1", "changed"), ...first.slice(3)];
    expect(await builder.build(undefined, edited, options())).toEqual(await reference(undefined, edited));
    const compacted = convertToLlm([{ role: "compactionSummary", summary: "earlier", tokensBefore: 5, timestamp: 0 }, ...first.slice(3)]);
    expect(await builder.build(undefined, compacted, options())).toEqual(await reference(undefined, compacted));
    const shorter = first.slice(0, 2);
    expect(await builder.build(undefined, shorter, options())).toEqual(await reference(undefined, shorter));
  });

  it("rejects an empty prompt and a malformed message with the SDK's InvalidPromptError, on every call", async () => {
    const builder = createPromptBuilder(target);
    await expect(builder.build(undefined, [], options())).rejects.toThrow(/messages must not be empty/);
    const valid = [user("hello"), assistant([{ type: "text", text: "hi" }]), user("next")];
    await builder.build(undefined, valid, options());
    const bad = { role: "user", content: [{ type: "image", data: 42, mimeType: "image/png" }], timestamp: 0 } as unknown as AgentMessage;
    const withBad = [...valid, assistant([{ type: "text", text: "ok" }]), bad];
    await expect(builder.build(undefined, withBad, options())).rejects.toThrow(/ModelMessage\[\] schema/);
    await expect(builder.build(undefined, [...withBad, user("after")], options())).rejects.toThrow(/ModelMessage\[\] schema/);
  });
});

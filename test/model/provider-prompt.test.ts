/**
 * The one-pass provider prompt of our own message shapes (issue 17 P2c, `provider-prompt.ts`)
 * is exactly what the AI SDK's `convertToLanguageModelPrompt` makes of the same messages
 * (`toStrictEqual`: the same keys, `undefined` ones included), for generated conversations of
 * every shape the check accepts; messages it cannot convert are left to the SDK; and
 * `WholePromptCheck` is set whenever the SDK's whole-prompt steps would merge messages or throw
 * (it may also be set when they would not: the caller then asks the SDK). The prompt builder's output equals the SDK's for generated Arbor histories
 * with images (converted by the SDK) beside the rest (converted directly).
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPromptBuilder } from "../../src/adapters/model/incremental-prompt.ts";
import { providerMessageOf, WholePromptCheck } from "../../src/adapters/model/provider-prompt.ts";
import { toModelMessages, type ModelTarget } from "../../src/adapters/model/to-model-messages.ts";
import type { AgentMessage } from "../../src/core/messages.ts";
import { unknownUsage } from "../../src/core/messages.ts";

const signal = () => new AbortController().signal;
const sdk = (messages: ModelMessage[], system?: string) =>
  convertToLanguageModelPrompt({ prompt: { instructions: system, messages }, supportedUrls: {}, download: undefined, abortSignal: signal() });

const json: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 });
const providerOptions = fc.option(fc.dictionary(fc.constantFrom("openai", "anthropic"), fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 2 }), { maxKeys: 2 }), { nil: undefined });
const withOptions = <T extends object>(part: T, options: unknown) => (options === undefined ? part : { ...part, providerOptions: options });
const text = fc.constantFrom("", "a", "hello", " ");
const id = fc.constantFrom("c1", "c2", "c3");

const textPart = fc.tuple(text, providerOptions).map(([value, options]) => withOptions({ type: "text" as const, text: value }, options));
const imagePart = fc.constant({ type: "image" as const, image: "aGk=", mediaType: "image/png" });
const userMessage = fc.oneof(
  text.map((content) => ({ role: "user" as const, content })),
  fc.tuple(fc.array(fc.oneof({ weight: 5, arbitrary: textPart }, { weight: 1, arbitrary: imagePart }), { maxLength: 3 }), providerOptions).map(([content, options]) => withOptions({ role: "user" as const, content }, options)),
);
const assistantPart = fc.oneof(
  textPart,
  fc.tuple(text, providerOptions).map(([value, options]) => withOptions({ type: "reasoning" as const, text: value }, options)),
  fc
    .tuple(id, fc.constantFrom("read", "grep"), json, fc.option(fc.boolean(), { nil: undefined }), providerOptions)
    .map(([toolCallId, toolName, input, providerExecuted, options]) =>
      withOptions({ type: "tool-call" as const, toolCallId, toolName, input, ...(providerExecuted === undefined ? {} : { providerExecuted }) }, options),
    ),
);
const assistantMessage = fc.oneof(
  text.map((content) => ({ role: "assistant" as const, content })),
  fc.tuple(fc.array(assistantPart, { maxLength: 3 }), providerOptions).map(([content, options]) => withOptions({ role: "assistant" as const, content }, options)),
);
const output = fc.oneof(
  fc.string({ maxLength: 3 }).map((value) => ({ type: "text" as const, value })),
  fc.string({ maxLength: 3 }).map((value) => ({ type: "error-text" as const, value })),
  fc
    .array(fc.oneof(fc.string({ maxLength: 3 }).map((value) => ({ type: "text" as const, text: value })), fc.constant({ type: "image-data" as const, data: "aGk=", mediaType: "image/png" })), { maxLength: 2 })
    .map((value) => ({ type: "content" as const, value })),
);
const toolMessage = fc
  .tuple(fc.array(fc.tuple(id, output, providerOptions).map(([toolCallId, out, options]) => withOptions({ type: "tool-result" as const, toolCallId, toolName: "read", output: out }, options)), { maxLength: 2 }), providerOptions)
  .map(([content, options]) => withOptions({ role: "tool" as const, content }, options));
const conversation = fc.array(fc.oneof(userMessage, assistantMessage, toolMessage), { minLength: 1, maxLength: 6 }) as fc.Arbitrary<ModelMessage[]>;

describe("providerMessageOf", () => {
  it("gives exactly the SDK's provider messages whenever WholePromptCheck does not ask for the SDK", async () => {
    let compared = 0;
    let whole = 0;
    await fc.assert(
      fc.asyncProperty(conversation, fc.option(fc.string({ maxLength: 3 }), { nil: undefined }), async (messages, system) => {
        const direct = messages.map(providerMessageOf);
        const reference = await sdk(messages, system).catch((error: unknown) => ({ error }));
        if (direct.some((message) => message === undefined)) {
          // Left to the SDK only for what needs it: a user image or an empty tool message.
          for (const [index, message] of direct.entries()) {
            if (message !== undefined) continue;
            const source = messages[index]!;
            const imageOrEmpty = (source.role === "user" && Array.isArray(source.content) && source.content.some((part) => part.type === "image")) || (source.role === "tool" && source.content.length === 0);
            expect(imageOrEmpty).toBe(true);
          }
          return;
        }
        const prompt = [...(system === undefined ? [] : [{ role: "system" as const, content: system }]), ...(direct as LanguageModelV4Prompt)];
        const check = new WholePromptCheck();
        for (const message of direct as LanguageModelV4Prompt) check.add(message);
        if (check.end()) {
          whole++;
          return;
        }
        compared++;
        expect(reference).toStrictEqual(prompt);
      }),
      { numRuns: 2000 },
    );
    expect(compared).toBeGreaterThan(200);
    expect(whole).toBeGreaterThan(50);
    // and a prompt the SDK rejects or merges is always sent to it
    const ask = (messages: ModelMessage[]) => {
      const check = new WholePromptCheck();
      for (const message of messages) check.add(providerMessageOf(message)!);
      return check.end();
    };
    const call = { role: "assistant" as const, content: [{ type: "tool-call" as const, toolCallId: "c1", toolName: "read", input: {} }] };
    const answer = { role: "tool" as const, content: [{ type: "tool-result" as const, toolCallId: "c1", toolName: "read", output: { type: "text" as const, value: "r" } }] };
    expect(ask([call, answer])).toBe(false);
    expect(ask([call])).toBe(true);
    expect(ask([call, { role: "user", content: "next" }])).toBe(true);
    expect(ask([call, answer, answer])).toBe(true);
  });

  it("leaves what the shape check does not accept to the SDK", () => {
    expect(providerMessageOf({ role: "user", content: [{ type: "text", text: 7 }] } as never)).toBeUndefined();
    expect(providerMessageOf({ role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "json", value: 1 } }] })).toBeUndefined();
    expect(providerMessageOf({ role: "system", content: "s" })).toBeUndefined();
  });
});

describe("createPromptBuilder with images beside direct messages", () => {
  const target: ModelTarget = { provider: "openai", api: "openai-responses", modelId: "gpt-test" };
  const agentMessage = fc.oneof(
    fc.constantFrom("hi", "").map((content): AgentMessage => ({ role: "user", content, timestamp: 0 })),
    fc.constant<AgentMessage>({ role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/jpeg" }], timestamp: 0 }),
    fc.constantFrom(0, 1, 2).map((calls): AgentMessage => ({
      role: "assistant",
      content: [{ type: "text", text: "t" }, ...Array.from({ length: calls }, (_, index) => ({ type: "toolCall" as const, id: `call_${index}`, name: "read", arguments: { n: index } }))],
      api: "openai-responses",
      provider: "openai",
      model: "gpt-test",
      usage: unknownUsage(),
      stopReason: calls > 0 ? "toolUse" : "stop",
      timestamp: 0,
    })),
    fc.tuple(fc.constantFrom("call_0", "call_1"), fc.boolean()).map(([toolCallId, image]): AgentMessage => ({
      role: "toolResult",
      toolCallId,
      toolName: "read",
      content: image ? [{ type: "image", data: "aGk=", mimeType: "image/png" }] : [{ type: "text", text: "r" }],
      isError: false,
      timestamp: 0,
    })),
  );

  it("equals standardizePrompt + convertToLanguageModelPrompt of the whole history, strictly", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(agentMessage, { minLength: 1, maxLength: 12 }), async (messages) => {
        const models = toModelMessages(messages, target);
        const reference = await standardizePrompt({ system: "sys", messages: models })
          .then((standardized) => convertToLanguageModelPrompt({ prompt: standardized, supportedUrls: {}, download: undefined, abortSignal: signal() }))
          .catch((error: unknown) => ({ error: String(error) }));
        const built = await createPromptBuilder(target)
          .build("sys", messages, { supportedUrls: {}, abortSignal: signal() })
          .catch((error: unknown) => ({ error: String(error) }));
        expect(built).toStrictEqual(reference);
      }),
      { numRuns: 400 },
    );
  });
});

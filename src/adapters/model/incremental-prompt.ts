/**
 * The provider prompt of a conversation, built incrementally: each message is converted and validated once, and a later call of the same
 * conversation (recognised by its first message object) converts only the suffix after the last clean point, reusing the prefix while the messages
 * are the same objects. The result equals a full conversion, errors included; the cache advances only after success; messages must not be mutated
 * after they were sent.
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { convertModelPrompt } from "./ai-sdk-internal.ts";
import { validateModelPrompt } from "./prompt-validation.ts";
import type { AgentMessage } from "../../core/messages.ts";
import { conformsToModelMessage } from "./prompt-shape.ts";
import { providerMessageOf, WholePromptCheck } from "./provider-prompt.ts";
import { eachModelMessageFrom, type ModelTarget, toModelMessagesFrom } from "./to-model-messages.ts";

type PromptMessage = LanguageModelV4Prompt[number];

/** One conversation's cached prefix: `prompts` is the provider prompt of the inputs (without the system message). */
interface Cached {
  inputs: readonly AgentMessage[];
  prompts: readonly PromptMessage[];
}

/** Builds provider prompts for one model target; see the module contract. */
export interface PromptBuilder {
  build(
    system: string | undefined,
    messages: readonly AgentMessage[],
    options: { supportedUrls: Record<string, RegExp[]>; abortSignal: AbortSignal },
  ): Promise<LanguageModelV4Prompt>;
}

/** A prompt builder for `target`; `build` rejects as `validateModelPrompt` and `convertToLanguageModelPrompt` do. */
export function createPromptBuilder(target: ModelTarget): PromptBuilder {
  const conversations = new WeakMap<AgentMessage, Cached>();
  const validated = new WeakSet<ModelMessage>();

  /** How many of the cached inputs `messages` starts with (all of them, or 0). */
  const reusable = (cached: Cached | undefined, messages: readonly AgentMessage[]): number => {
    if (!cached || cached.inputs.length > messages.length) return 0;
    for (let index = cached.inputs.length - 1; index >= 0; index--) if (cached.inputs[index] !== messages[index]) return 0;
    return cached.inputs.length;
  };

  return {
    async build(system, messages, { supportedUrls, abortSignal }) {
      const key = messages[0];
      const cached = key === undefined ? undefined : conversations.get(key);
      const start = reusable(cached, messages);
      const prefixPrompts = start > 0 && cached ? cached.prompts : [];

      // Each converted message of a shape our converter emits is checked with typeof tests and turned into its provider prompt message at once
      // (provider-prompt.ts), so the intermediate ModelMessage dies young; only the rest (not yet validated by this builder) go to zod, so reopening
      // a long session validates nothing twice and hands nothing to the SDK's converter.
      const tailPrompts: PromptMessage[] = [];
      const others: { at: number; message: ModelMessage }[] = [];
      const fresh: ModelMessage[] = [];
      let whole = false;
      const check = new WholePromptCheck();
      const tail = eachModelMessageFrom(messages, target, start, (message) => {
        const direct = providerMessageOf(message);
        if (direct !== undefined) {
          tailPrompts.push(direct);
          check.add(direct);
          return;
        }
        if (!validated.has(message) && !conformsToModelMessage(message)) fresh.push(message);
        // A user message converts alone as within the prompt (the SDK merges and checks only tool calls and results).
        if (message.role !== "user") whole = true;
        others.push({ at: tailPrompts.length, message });
        tailPrompts.push(undefined as never);
        check.add({ role: "user", content: [] }); // a user message (or `whole` anyway): closes the open calls
      });
      if (fresh.length > 0 || prefixPrompts.length + tailPrompts.length === 0) {
        // Throws the AI SDK's own InvalidPromptError for an empty or malformed prompt.
        await validateModelPrompt(system, fresh);
      }
      for (const message of fresh) validated.add(message);

      const convert = (prompt: { system?: string | undefined; messages: ModelMessage[] }) => convertModelPrompt(prompt, { supportedUrls, abortSignal });
      if (!whole && others.length > 0) {
        const converted = await convert({ messages: others.map((other) => other.message) });
        if (converted.length === others.length) others.forEach((other, index) => (tailPrompts[other.at] = converted[index]));
        else whole = true;
      }
      const systemPrompts: PromptMessage[] = system === undefined ? [] : [{ role: "system", content: system }];
      let finalTail = tailPrompts;
      if (check.end() || whole) {
        // Something only the SDK's whole-prompt conversion handles (never for our converter's output):
        // convert the tail again with the SDK, as a full conversion would.
        const converted = await convert({ system, messages: toModelMessagesFrom(messages, target, start).messages });
        finalTail = converted.slice(systemPrompts.length);
        if (finalTail.length !== tailPrompts.length) {
          // The SDK merged or dropped messages: no 1:1 cache, convert it whole.
          if (key !== undefined) conversations.delete(key);
          return convert({ system, messages: toModelMessagesFrom(messages, target, 0).messages });
        }
      }
      if (key !== undefined) {
        conversations.set(key, {
          inputs: messages.slice(0, tail.clean),
          prompts: prefixPrompts.concat(finalTail.slice(0, tail.cleanOut)),
        });
      }
      return systemPrompts.concat(prefixPrompts, finalTail);
    },
  };
}

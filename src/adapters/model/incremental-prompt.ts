/**
 * The provider prompt of a conversation, built incrementally (ours, issue 17): each message is
 * converted (`toModelMessages`), validated (the AI SDK's `standardizePrompt`, zod) and turned
 * into the provider's prompt (`convertToLanguageModelPrompt`) once; a later call of the same
 * conversation converts only its new suffix and reuses the rest by object identity.
 *
 * Contract:
 * - the prompt equals what a full conversion of `messages` gives (same system message, same
 *   messages in order, same errors: an empty or malformed prompt rejects with the AI SDK's
 *   `InvalidPromptError`);
 * - a conversation is recognised by its first message object (`WeakMap`); its cached prefix is
 *   reused when the new call's first `n` messages are the same objects (`===`) as the `n`
 *   inputs behind the cached prefix (one pointer comparison per message; no digest, no copy
 *   of the content). Otherwise (compaction, a branch, edited messages) it converts from scratch;
 * - only messages after the last clean point (the last user or assistant message of the
 *   previous call: see `toModelMessagesFrom`) are converted and validated again; a message of
 *   a shape our converter emits is validated by `conformsToModelMessage` (typeof tests of every
 *   field the AI SDK's schema checks, `prompt-shape.ts`), any other goes to `standardizePrompt`
 *   (zod), so the first call after opening a 100,000-message session hands nothing to zod;
 * - the cache advances only after a prompt validated and converted, so a rejected message is
 *   rejected again on the next call; messages must not be mutated after they were sent (the
 *   log's messages never are);
 * - concurrent calls are safe: each builds from a snapshot and stores a consistent state.
 *
 * @example
 * ```ts
 * const builder = createPromptBuilder({ provider: "openai", api: "openai-chat", modelId: "gpt-4o" });
 * const prompt = await builder.build("Be brief.", messages, { supportedUrls: {}, abortSignal });
 * ```
 */
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { convertToLanguageModelPrompt, standardizePrompt } from "ai/internal";
import type { ModelMessage } from "ai";
import type { AgentMessage } from "../../core/messages.ts";
import { conformsToModelMessage } from "./prompt-shape.ts";
import { type ModelTarget, toModelMessagesFrom } from "./to-model-messages.ts";

type PromptMessage = LanguageModelV3Prompt[number];

/** One conversation's cached prefix: `models[i]` came from the inputs, `prompts[i]` from `models[i]`. */
interface Cached {
  inputs: readonly AgentMessage[];
  models: readonly ModelMessage[];
  prompts: readonly PromptMessage[];
}

/** Builds provider prompts for one model target; see the module contract. */
export interface PromptBuilder {
  build(
    system: string | undefined,
    messages: readonly AgentMessage[],
    options: { supportedUrls: Record<string, RegExp[]>; abortSignal: AbortSignal },
  ): Promise<LanguageModelV3Prompt>;
}

/**
 * A prompt builder for `target` (the model being called; see `toModelMessages`). Never throws;
 * `build` rejects as `standardizePrompt` and `convertToLanguageModelPrompt` do.
 *
 * @example
 * ```ts
 * const prompt = await createPromptBuilder(target).build(undefined, [{ role: "user", content: "hi", timestamp: 0 }], { supportedUrls: {}, abortSignal });
 * ```
 */
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
      const prefixModels = start > 0 && cached ? cached.models : [];
      const prefixPrompts = start > 0 && cached ? cached.prompts : [];
      const tail = toModelMessagesFrom(messages, target, start);

      // Messages of the shapes our converter emits are checked with typeof tests; only the rest
      // (not yet validated by this builder) go to zod, so reopening a long session validates nothing twice.
      const fresh = tail.messages.filter((message) => !validated.has(message) && !conformsToModelMessage(message));
      if (fresh.length > 0 || prefixModels.length + tail.messages.length === 0) {
        // Throws the AI SDK's own InvalidPromptError for an empty or malformed prompt.
        await standardizePrompt({ system, messages: fresh });
      }
      for (const message of fresh) validated.add(message);

      const converted = await convertToLanguageModelPrompt({ prompt: { system, messages: tail.messages }, supportedUrls, download: undefined, abortSignal });
      const systemMessages = system === undefined ? 0 : 1;
      const tailPrompts = converted.slice(systemMessages);
      if (tailPrompts.length !== tail.messages.length) {
        // The SDK merged or dropped messages (never for toModelMessages' output): no 1:1 cache, convert it whole.
        if (key !== undefined) conversations.delete(key);
        return convertToLanguageModelPrompt({
          prompt: { system, messages: [...prefixModels, ...tail.messages] },
          supportedUrls,
          download: undefined,
          abortSignal,
        });
      }
      if (key !== undefined) {
        conversations.set(key, {
          inputs: messages.slice(0, tail.clean),
          models: prefixModels.concat(tail.messages.slice(0, tail.cleanOut)),
          prompts: prefixPrompts.concat(tailPrompts.slice(0, tail.cleanOut)),
        });
      }
      return [...converted.slice(0, systemMessages), ...prefixPrompts, ...tailPrompts];
    },
  };
}

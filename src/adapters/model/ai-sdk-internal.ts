/**
 * The one module that imports `ai/internal`, the AI SDK's non-public entry point (it may change in any release, minor ones included). `ai` 7 has no
 * public equivalent of `convertToLanguageModelPrompt` (model messages to the provider prompt, `LanguageModelV4Prompt`), which the incremental prompt
 * builder needs; validation uses the public `modelMessageSchema` (`prompt-validation.ts`), and everything else Arbor uses of the SDK is public.
 * `test/model/ai-sdk-internal.test.ts` pins the shape used here and fails loudly, naming the function, when an `ai` upgrade changes it.
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import { convertToLanguageModelPrompt } from "ai/internal";

/**
 * The provider prompt of `system` + `messages` as the SDK builds it (system message first; tool messages merged; a tool call without a result rejects
 * with `MissingToolResultsError`). A file URL the model does not support (`supportedUrls`) is fetched by the SDK's default download; Arbor's own
 * messages carry images as data, so none is.
 */
export function convertModelPrompt(
  prompt: { system?: string | undefined; messages: ModelMessage[] },
  options: { supportedUrls: Record<string, RegExp[]>; abortSignal: AbortSignal },
): Promise<LanguageModelV4Prompt> {
  return convertToLanguageModelPrompt({
    prompt: { instructions: prompt.system, messages: prompt.messages },
    supportedUrls: options.supportedUrls,
    download: undefined,
    abortSignal: options.abortSignal,
  });
}

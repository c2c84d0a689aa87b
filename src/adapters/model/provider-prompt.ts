/**
 * The provider prompt message (`LanguageModelV3Message`) of one `ModelMessage` of a shape
 * Arbor's converter emits, built in one pass (ours, issue 17 P2c): the same object the AI SDK's
 * `convertToLanguageModelPrompt` builds for that message (same fields, including the
 * `providerOptions` / `providerExecuted` keys it sets to `undefined`; the tool-result `output`
 * and tool-call `input` objects shared, as the SDK shares them), without its `downloadAssets`
 * scan of the whole prompt or its per-prompt arrays.
 *
 * Contract:
 * - only messages `conformsToModelMessage` accepts (`prompt-shape.ts`) and that hold nothing
 *   the SDK would download or sniff are converted: user text, assistant text / reasoning /
 *   tool-call parts, tool messages of one or more tool-result parts (text, error-text, or
 *   content of text and image-data); a user image part, an empty tool message (the SDK drops
 *   it) or anything unsure gives `undefined`, and the caller uses the SDK;
 * - the conversion of a message does not depend on the others; what does (the SDK merging
 *   consecutive tool messages, `MissingToolResultsError`) is {@link needsWholePromptConversion};
 * - never throws; never mutates its input. `test/model/provider-prompt.test.ts` compares it with
 *   the SDK's output for generated messages.
 *
 * @example
 * ```ts
 * providerMessageOf({ role: "user", content: "hi" }); // { role: "user", content: [{ type: "text", text: "hi" }], providerOptions: undefined }
 * providerMessageOf({ role: "user", content: [{ type: "image", image: "aGk=" }] }); // undefined: the SDK converts it
 * ```
 */
import type { LanguageModelV3Message, LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { AssistantModelMessage, ModelMessage, ToolModelMessage, UserModelMessage } from "ai";
import { conformsToModelMessage } from "./prompt-shape.ts";

type Part<M extends { content: unknown }> = Exclude<M["content"], string> extends readonly (infer P)[] ? P : never;
type ProviderPart<Role extends LanguageModelV3Message["role"]> = Exclude<Extract<LanguageModelV3Message, { role: Role }>["content"], string>[number];
type ProviderToolResult = Extract<ProviderPart<"tool">, { type: "tool-result" }>;

function userMessage(message: UserModelMessage): LanguageModelV3Message | undefined {
  const content = message.content;
  if (typeof content === "string") return { role: "user", content: [{ type: "text", text: content }], providerOptions: message.providerOptions };
  const parts: ProviderPart<"user">[] = [];
  for (const part of content as Part<UserModelMessage>[]) {
    if (part.type !== "text") return undefined; // images: the SDK parses, may download and sniffs the media type
    if (part.text !== "") parts.push({ type: "text", text: part.text, providerOptions: part.providerOptions });
  }
  return { role: "user", content: parts, providerOptions: message.providerOptions };
}

function assistantMessage(message: AssistantModelMessage): LanguageModelV3Message | undefined {
  const content = message.content;
  if (typeof content === "string") return { role: "assistant", content: [{ type: "text", text: content }], providerOptions: message.providerOptions };
  const parts: ProviderPart<"assistant">[] = [];
  for (const part of content as Part<AssistantModelMessage>[]) {
    if (part.type === "text") {
      if (part.text !== "" || part.providerOptions != null) parts.push({ type: "text", text: part.text, providerOptions: part.providerOptions });
    } else if (part.type === "reasoning") {
      parts.push({ type: "reasoning", text: part.text, providerOptions: part.providerOptions });
    } else if (part.type === "tool-call") {
      parts.push({
        type: "tool-call",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: part.input,
        providerExecuted: part.providerExecuted,
        providerOptions: part.providerOptions,
      });
    } else {
      return undefined;
    }
  }
  return { role: "assistant", content: parts, providerOptions: message.providerOptions };
}

function toolMessage(message: ToolModelMessage): LanguageModelV3Message | undefined {
  if (message.content.length === 0) return undefined; // the SDK drops an empty tool message
  const parts: ProviderPart<"tool">[] = [];
  for (const part of message.content as Part<ToolModelMessage>[]) {
    if (part.type !== "tool-result") return undefined;
    const output = part.output;
    // The SDK passes text and error-text outputs through, and copies a content array's text and image-data items.
    const mapped = output.type === "content" ? { type: "content" as const, value: output.value.slice() } : output;
    parts.push({ type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: mapped as ProviderToolResult["output"], providerOptions: part.providerOptions });
  }
  return { role: "tool", content: parts, providerOptions: message.providerOptions };
}

/**
 * The provider prompt message the AI SDK's `convertToLanguageModelPrompt` makes of `message`,
 * or `undefined` when the SDK must convert it (see the module contract). Never throws.
 *
 * @example
 * ```ts
 * const direct = providerMessageOf(message) ?? (await convertToLanguageModelPrompt({ prompt: { messages: [message] }, supportedUrls: {}, download: undefined }))[0];
 * ```
 */
export function providerMessageOf(message: ModelMessage): LanguageModelV3Message | undefined {
  if (!conformsToModelMessage(message)) return undefined;
  if (message.role === "user") return userMessage(message);
  if (message.role === "assistant") return assistantMessage(message);
  if (message.role === "tool") return toolMessage(message);
  return undefined;
}

/**
 * Whether the SDK's whole-prompt steps would change or reject `prompt` (provider messages in
 * order): two consecutive tool messages (the SDK merges them) or a tool call without a result
 * before the next user message or the end (the SDK throws `MissingToolResultsError`). Arbor's
 * converter never emits either; when this is `true` the caller converts with the SDK, which
 * merges or throws its own error. Never throws.
 *
 * @example
 * ```ts
 * if (needsWholePromptConversion(direct)) prompt = await convertToLanguageModelPrompt({ prompt: { system, messages }, supportedUrls, download: undefined });
 * ```
 */
export function needsWholePromptConversion(prompt: LanguageModelV3Prompt): boolean {
  const open = new Set<string>();
  let previous: LanguageModelV3Message["role"] | undefined;
  for (const message of prompt) {
    if (message.role === "tool") {
      if (previous === "tool") return true;
      for (const part of message.content) if (part.type === "tool-result") open.delete(part.toolCallId);
    } else if (message.role === "assistant") {
      for (const part of message.content) if (part.type === "tool-call" && !part.providerExecuted) open.add(part.toolCallId);
    } else if (open.size > 0) {
      return true;
    }
    previous = message.role;
  }
  return open.size > 0;
}

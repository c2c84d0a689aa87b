/**
 * The provider prompt message (`LanguageModelV4Message`) of one `ModelMessage` of a shape
 * Arbor's converter emits, built in one pass (ours): the same object the AI SDK's
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
 *   consecutive tool messages, `MissingToolResultsError`) is {@link WholePromptCheck};
 * - never throws; never mutates its input. `test/model/provider-prompt.test.ts` compares it with
 *   the SDK's output for generated messages.
 *
 * @example
 * ```ts
 * providerMessageOf({ role: "user", content: "hi" }); // { role: "user", content: [{ type: "text", text: "hi" }], providerOptions: undefined }
 * providerMessageOf({ role: "user", content: [{ type: "image", image: "aGk=" }] }); // undefined: the SDK converts it
 * ```
 */
import type { LanguageModelV4Message } from "@ai-sdk/provider";
import type { AssistantModelMessage, ModelMessage, ToolModelMessage, UserModelMessage } from "ai";
import { conformsToModelMessage } from "./prompt-shape.ts";

type Part<M extends { content: unknown }> = Exclude<M["content"], string> extends readonly (infer P)[] ? P : never;
type ProviderPart<Role extends LanguageModelV4Message["role"]> = Exclude<Extract<LanguageModelV4Message, { role: Role }>["content"], string>[number];
type ProviderToolResult = Extract<ProviderPart<"tool">, { type: "tool-result" }>;

// Content arrays are made at their final length (`map`, literals): an array grown by `push` keeps
// a 17-slot backing store, about 130 bytes more per message of a 100,000-message prompt that lives on.

function userPart(part: Part<UserModelMessage>): ProviderPart<"user"> {
  const text = part as Extract<Part<UserModelMessage>, { type: "text" }>;
  return { type: "text", text: text.text, providerOptions: text.providerOptions };
}

function userMessage(message: UserModelMessage): LanguageModelV4Message | undefined {
  const content = message.content;
  if (typeof content === "string") return { role: "user", content: [{ type: "text", text: content }], providerOptions: message.providerOptions };
  const parts = content as Part<UserModelMessage>[];
  let empty = false;
  for (const part of parts) {
    if (part.type !== "text") return undefined; // images: the SDK parses, may download and sniffs the media type
    if (part.text === "") empty = true;
  }
  const kept = empty ? parts.filter((part) => (part as { text: string }).text !== "") : parts;
  return { role: "user", content: kept.map(userPart), providerOptions: message.providerOptions };
}

function assistantPart(part: Part<AssistantModelMessage>): ProviderPart<"assistant"> {
  if (part.type === "tool-call") {
    return {
      type: "tool-call",
      toolCallId: part.toolCallId,
      toolName: part.toolName,
      input: part.input,
      providerExecuted: part.providerExecuted,
      providerOptions: part.providerOptions,
    };
  }
  const text = part as Extract<Part<AssistantModelMessage>, { type: "text" | "reasoning" }>;
  return { type: text.type, text: text.text, providerOptions: text.providerOptions };
}

/** The SDK drops an assistant text part with no text and no provider options. */
const keptAssistantPart = (part: Part<AssistantModelMessage>) => part.type !== "text" || part.text !== "" || part.providerOptions != null;

function assistantMessage(message: AssistantModelMessage): LanguageModelV4Message | undefined {
  const content = message.content;
  if (typeof content === "string") return { role: "assistant", content: [{ type: "text", text: content }], providerOptions: message.providerOptions };
  const parts = content as Part<AssistantModelMessage>[];
  let dropped = false;
  for (const part of parts) {
    if (part.type !== "text" && part.type !== "reasoning" && part.type !== "tool-call") return undefined;
    if (!keptAssistantPart(part)) dropped = true;
  }
  return { role: "assistant", content: (dropped ? parts.filter(keptAssistantPart) : parts).map(assistantPart), providerOptions: message.providerOptions };
}

function toolPart(part: Part<ToolModelMessage>): ProviderPart<"tool"> {
  const result = part as Extract<Part<ToolModelMessage>, { type: "tool-result" }>;
  const output = result.output;
  // The SDK passes text and error-text outputs through, copies a content array's text items, and
  // turns an image-data item into a file part with inline data (`ai` 7, spec v4).
  const mapped =
    output.type === "content"
      ? {
          type: "content" as const,
          value: output.value.map((item) =>
            item.type === "image-data" ? { type: "file" as const, data: { type: "data" as const, data: item.data }, mediaType: item.mediaType, providerOptions: item.providerOptions } : item,
          ),
        }
      : output;
  return { type: "tool-result", toolCallId: result.toolCallId, toolName: result.toolName, output: mapped as ProviderToolResult["output"], providerOptions: result.providerOptions };
}

function toolMessage(message: ToolModelMessage): LanguageModelV4Message | undefined {
  const parts = message.content as Part<ToolModelMessage>[];
  if (parts.length === 0) return undefined; // the SDK drops an empty tool message
  for (const part of parts) if (part.type !== "tool-result") return undefined;
  return { role: "tool", content: parts.map(toolPart), providerOptions: message.providerOptions };
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
export function providerMessageOf(message: ModelMessage): LanguageModelV4Message | undefined {
  if (!conformsToModelMessage(message)) return undefined;
  if (message.role === "user") return userMessage(message);
  if (message.role === "assistant") return assistantMessage(message);
  if (message.role === "tool") return toolMessage(message);
  return undefined;
}

/**
 * Whether the SDK's whole-prompt steps could change or reject a prompt, fed its provider
 * messages in order (`add`), then read (`needed`): true for two consecutive tool messages (the
 * SDK merges them), a tool call not answered by the tool message right after its assistant
 * message (the SDK throws `MissingToolResultsError` unless a later tool message answers it), or
 * anything else this cheap check does not follow. Conservative: `needed === false` means the SDK
 * would return the messages as given. Arbor's converter never emits any of these; when `needed`
 * the caller converts with the SDK, which merges or throws its own error. Never throws.
 *
 * @example
 * ```ts
 * const check = new WholePromptCheck();
 * for (const message of prompt) check.add(message);
 * if (check.needed) prompt = await convertToLanguageModelPrompt({ prompt: { system, messages }, supportedUrls, download: undefined });
 * ```
 */
export class WholePromptCheck {
  /** True once the SDK might change or reject the prompt. */
  needed = false;
  /** Tool calls of the last assistant message not yet answered (usually none or a few). */
  private open: string[] = [];
  private previous: LanguageModelV4Message["role"] | undefined;

  /** Feed the next provider message of the prompt. */
  add(message: LanguageModelV4Message): void {
    const open = this.open;
    if (message.role === "tool") {
      if (this.previous === "tool") this.needed = true;
      const content = message.content;
      for (let index = 0; index < content.length && open.length > 0; index++) {
        const part = content[index];
        if (part.type !== "tool-result") continue;
        for (let at = open.length - 1; at >= 0; at--) if (open[at] === part.toolCallId) open.splice(at, 1);
      }
    } else {
      // Calls left open by the previous assistant are missing results for the SDK (or answered later: not followed here).
      if (open.length > 0) this.needed = true;
      if (message.role === "assistant") {
        const content = message.content;
        for (let index = 0; index < content.length; index++) {
          const part = content[index];
          if (part.type === "tool-call" && !part.providerExecuted) open.push(part.toolCallId);
        }
      }
    }
    this.previous = message.role;
  }

  /** Call after the last message: calls still open at the end are missing results. */
  end(): boolean {
    if (this.open.length > 0) this.needed = true;
    return this.needed;
  }
}

/**
 * The provider prompt message of one `ModelMessage` of a shape Arbor's converter emits, built in one pass: the same object the AI SDK's
 * `convertToLanguageModelPrompt` builds, without its whole-prompt scans. Anything unsure (user images, empty tool messages) gives `undefined` and
 * the caller uses the SDK. Never throws or mutates; `test/model/provider-prompt.test.ts` compares it with the SDK.
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
 */
export function providerMessageOf(message: ModelMessage): LanguageModelV4Message | undefined {
  if (!conformsToModelMessage(message)) return undefined;
  if (message.role === "user") return userMessage(message);
  if (message.role === "assistant") return assistantMessage(message);
  if (message.role === "tool") return toolMessage(message);
  return undefined;
}

/**
 * Whether the SDK's whole-prompt steps could change or reject a prompt, fed its provider messages in order (`add`), then read (`needed`): true for
 * two consecutive tool messages (the SDK merges them), a tool call not answered by the tool message right after its assistant message (the SDK throws
 * `MissingToolResultsError` unless a later tool message answers it), or anything else this cheap check does not follow. Conservative: `needed ===
 * false` means the SDK would return the messages as given. Arbor's converter never emits any of these; when `needed` the caller converts with the
 * SDK, which merges or throws its own error. Never throws.
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

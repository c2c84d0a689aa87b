/**
 * Message content for spans (only with `captureContent`): Arbor messages in the OTel GenAI message shape (role + typed parts; images as `blob` parts
 * WITHOUT their data) and the OpenInference flattening (`llm.input_messages.{i}.message.*`).
 */
import type { Attributes } from "@opentelemetry/api";
import type { AgentMessage, AssistantMessage, ImageContent, TextContent } from "../core/messages.ts";

/** One part of a GenAI message. */
export type GenAiPart =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "blob"; modality: "image"; mime_type: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; response: string };

/** A message in the GenAI shape; output messages carry `finish_reason`. */
export interface GenAiMessage {
  role: "system" | "user" | "assistant" | "tool";
  parts: GenAiPart[];
  finish_reason?: string;
}

const blocks = (content: string | (TextContent | ImageContent)[]): GenAiPart[] =>
  typeof content === "string"
    ? [{ type: "text", content }]
    : content.map((block) => (block.type === "text" ? { type: "text", content: block.text } : { type: "blob", modality: "image", mime_type: block.mimeType }));

/** The GenAI finish reason of an Arbor stop reason (`toolUse` → `tool_calls`). */
export function finishReasonOf(stopReason: string): string {
  return stopReason === "toolUse" ? "tool_calls" : stopReason;
}

/** One Arbor message as a GenAI message (undefined for synthetic summaries, which become user text). */
export function toGenAiMessage(message: AgentMessage): GenAiMessage {
  switch (message.role) {
    case "user":
      return { role: "user", parts: blocks(message.content) };
    case "custom":
      return { role: "user", parts: blocks(message.content) };
    case "toolResult":
      return { role: "tool", parts: [{ type: "tool_call_response", id: message.toolCallId, response: textOf(message.content) }] };
    case "assistant":
      return assistantMessage(message);
    default: {
      const other = message as unknown as Record<string, unknown>;
      const text = typeof other.summary === "string" ? other.summary : typeof other.command === "string" ? `${other.command}\n${String(other.output ?? "")}` : JSON.stringify(other);
      return { role: "user", parts: [{ type: "text", content: text }] };
    }
  }
}

function assistantMessage(message: AssistantMessage): GenAiMessage {
  const parts: GenAiPart[] = message.content.map((block) =>
    block.type === "text"
      ? { type: "text", content: block.text }
      : block.type === "thinking"
        ? { type: "reasoning", content: block.redacted ? "" : block.thinking }
        : { type: "tool_call", id: block.id, name: block.name, arguments: block.arguments },
  );
  return { role: "assistant", parts };
}

/** Messages in the GenAI shape. */
export function toGenAiMessages(messages: readonly AgentMessage[]): GenAiMessage[] {
  return messages.map(toGenAiMessage);
}

/** The assistant's reply as the one GenAI output message, with its finish reason. */
export function outputMessageOf(message: AssistantMessage): GenAiMessage {
  return { ...assistantMessage(message), finish_reason: finishReasonOf(message.stopReason) };
}

/** Text parts of content joined with newlines (images left out). */
export function textOf(content: string | readonly (TextContent | ImageContent | { type: string })[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" ? [(block as TextContent).text] : [])).join("\n");
}

/** OpenInference's flattened message attributes under `prefix` (`llm.input_messages` or `llm.output_messages`). */
export function openInferenceMessages(prefix: string, messages: readonly GenAiMessage[]): Attributes {
  const attributes: Attributes = {};
  messages.forEach((message, index) => {
    const at = `${prefix}.${index}.message`;
    attributes[`${at}.role`] = message.role;
    const text = message.parts.flatMap((part) => (part.type === "text" ? [part.content] : part.type === "tool_call_response" ? [part.response] : [])).join("\n");
    if (text !== "") attributes[`${at}.content`] = text;
    let call = 0;
    for (const part of message.parts) {
      if (part.type === "tool_call") {
        attributes[`${at}.tool_calls.${call}.tool_call.id`] = part.id;
        attributes[`${at}.tool_calls.${call}.tool_call.function.name`] = part.name;
        attributes[`${at}.tool_calls.${call}.tool_call.function.arguments`] = JSON.stringify(part.arguments);
        call += 1;
      } else if (part.type === "tool_call_response") {
        attributes[`${at}.tool_call_id`] = part.id;
      }
    }
  });
  return attributes;
}

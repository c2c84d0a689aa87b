/**
 * Turns a conversation into labelled plain text for a summary call (pi's `serializeConversation`), so the model reads a transcript instead of
 * continuing a chat: `[User]:`, `[Assistant thinking]:`, `[Assistant]:`, `[Assistant tool calls]:`, `[Tool result]:` (cut at 2000 chars), plus
 * custom messages, bash runs and earlier summaries; paragraphs separated by a blank line.
 */
import type { AgentMessage, BashExecutionMessage } from "../core/messages.ts";

/**
 * Longest tool result text kept in a serialized conversation (characters). Source: pi.
 * @example
 * serializeConversation([longToolResult]); // cut after TOOL_RESULT_MAX_CHARS (2000) characters
 */
export const TOOL_RESULT_MAX_CHARS = 2000;

function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n\n[... ${text.length - maxChars} more characters truncated]`;
}

function joinedText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("");
}

function bashText(message: BashExecutionMessage): string {
  let text = `Ran \`${message.command}\`\n`;
  text += message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)";
  if (message.cancelled) text += "\n\n(command cancelled)";
  else if (typeof message.exitCode === "number" && message.exitCode !== 0) text += `\n\nCommand exited with code ${message.exitCode}`;
  return text;
}

/**
 * Serializes messages to text (see the module contract).
 * @example
 * const text = serializeConversation(preparation.messagesToSummarize);
 */
export function serializeConversation(messages: readonly AgentMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
      case "custom": {
        const text = joinedText(message.content);
        if (text) parts.push(`[User]: ${text}`);
        break;
      }
      case "bashExecution":
        if (!message.excludeFromContext) parts.push(`[User]: ${bashText(message)}`);
        break;
      case "assistant": {
        const texts: string[] = [];
        const thoughts: string[] = [];
        const calls: string[] = [];
        for (const block of message.content) {
          if (block.type === "text") texts.push(block.text);
          else if (block.type === "thinking") thoughts.push(block.thinking);
          else if (block.type === "toolCall") {
            const args = Object.entries(block.arguments ?? {}).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
            calls.push(`${block.name}(${args.join(", ")})`);
          }
        }
        if (thoughts.length > 0) parts.push(`[Assistant thinking]: ${thoughts.join("\n")}`);
        if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`);
        if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
        break;
      }
      case "toolResult": {
        const text = joinedText(message.content);
        if (text) parts.push(`[Tool result]: ${truncate(text, TOOL_RESULT_MAX_CHARS)}`);
        break;
      }
      case "compactionSummary":
        if (message.summary) parts.push(`[Earlier summary]: ${message.summary}`);
        break;
      case "branchSummary":
        if (message.summary) parts.push(`[Branch summary]: ${message.summary}`);
        break;
    }
  }
  return parts.join("\n\n");
}

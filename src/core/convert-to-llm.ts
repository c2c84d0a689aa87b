/**
 * pi's `convertToLlm` (exact strings): user, assistant and toolResult pass through; custom, summaries and bash executions become user messages;
 * other roles are dropped. Order kept, input never mutated, never throws; each input object converts to the same output object every time (a
 * `WeakMap`), so the model adapter can reuse its conversion. Dropping errored assistants is the adapter's job.
 */
import type { AgentMessage, AssistantMessage, BashExecutionMessage, ToolResultMessage, UserMessage } from "./messages.ts";

/**
 * Text placed before a compaction summary (pi's exact string).
 * @example
 * const text = COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX;
 */
export const COMPACTION_SUMMARY_PREFIX = `The conversation history before this point was compacted into the following summary:

<summary>
`;
/**
 * Text placed after a compaction summary (pi's exact string).
 * @example
 * const text = COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX;
 */
export const COMPACTION_SUMMARY_SUFFIX = `
</summary>`;
/**
 * Text placed before a branch summary (pi's exact string).
 * @example
 * const text = BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX;
 */
export const BRANCH_SUMMARY_PREFIX = `The following is a summary of a branch that this conversation came back from:

<summary>
`;
/**
 * Text placed after a branch summary (pi's exact string; note: no newline before it, as in pi).
 * @example
 * const text = BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX;
 */
export const BRANCH_SUMMARY_SUFFIX = `</summary>`;

/** A message a provider understands. Source: pi-ai `Message`. */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * The user-visible text of a shell command run by the user (pi's `!cmd`): "Ran `cmd`" + fenced output or "(no output)" + cancel / exit-code /
 * truncation notes. Source: pi `bashExecutionToText`.
 * @example
 * bashExecutionToText({ role: "bashExecution", command: "ls", output: "", exitCode: 0, cancelled: false, truncated: false, timestamp: 0 });
 * // "Ran `ls`\n(no output)"
 */
export function bashExecutionToText(message: BashExecutionMessage): string {
  let text = `Ran \`${message.command}\`\n`;
  text += message.output ? `\`\`\`\n${message.output}\n\`\`\`` : "(no output)";
  if (message.cancelled) {
    text += "\n\n(command cancelled)";
  } else if (message.exitCode !== null && message.exitCode !== undefined && message.exitCode !== 0) {
    text += `\n\nCommand exited with code ${message.exitCode}`;
  }
  if (message.truncated && message.fullOutputPath) {
    text += `\n\n[Output truncated. Full output: ${message.fullOutputPath}]`;
  }
  return text;
}

/**
 * Converts context messages to provider messages, exactly as pi 0.73.1 does (see the module contract above). Returns a new array; never throws.
 * @example
 * convertToLlm([{ role: "custom", customType: "note", content: "hi", display: true, timestamp: 1 }]);
 * // [{ role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 }]
 */
export function convertToLlm(messages: readonly AgentMessage[]): LlmMessage[] {
  const result: LlmMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
      case "assistant":
      case "toolResult":
        result.push(message);
        break;
      default: {
        if (message.role === "bashExecution" && message.excludeFromContext) break;
        const known = derived.get(message);
        const converted = known ?? derive(message);
        if (converted === undefined) break;
        if (known === undefined) derived.set(message, converted);
        result.push(converted);
      }
    }
  }
  return result;
}

/** The user message made from each non-provider message (see the contract). */
const derived = new WeakMap<AgentMessage, LlmMessage>();

function derive(message: AgentMessage): LlmMessage | undefined {
  switch (message.role) {
    case "bashExecution":
      return { role: "user", content: [{ type: "text", text: bashExecutionToText(message) }], timestamp: message.timestamp };
    case "custom":
      return {
        role: "user",
        content: typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content,
        timestamp: message.timestamp,
      };
    case "branchSummary":
      return {
        role: "user",
        content: [{ type: "text", text: BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX }],
        timestamp: message.timestamp,
      };
    case "compactionSummary":
      return {
        role: "user",
        content: [{ type: "text", text: COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX }],
        timestamp: message.timestamp,
      };
    default:
      return undefined;
  }
}

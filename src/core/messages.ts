/**
 * Arbor's message model: pi's AgentMessage, so sessions round-trip with pi 0.73.1. `timestamp` is epoch milliseconds; `compactionSummary` and
 * `branchSummary` are synthetic (made by the context projection, never stored); usage counts may be `null` (unknown stays unknown).
 * @example
 * const user: UserMessage = { role: "user", content: "hello", timestamp: Date.now() };
 */

/** Plain text. */
export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

/** Model reasoning ("thinking"). `redacted` marks encrypted/opaque reasoning. */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}

/** An image, base64 `data` with its `mimeType` (e.g. `image/png`). */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/**
 * A tool call inside an assistant message. `arguments` is the parsed JSON object. `argumentsError` (ours) is set when the provider's arguments text
 * did not parse as a JSON object (a stream cut mid-arguments, two calls glued together): `arguments` is then `{}`, and the loop never executes the
 * call; its result is an error naming this text.
 */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  thoughtSignature?: string;
  argumentsError?: string;
}

/** Cost in US dollars, computed from per-million-token prices. */
export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

/** Token usage of one model call, in tokens. A field is `null` when the provider did not report it; `cost` is absent when prices are unknown. */
export interface Usage {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  totalTokens: number | null;
  cost?: UsageCost;
}

/** Why an assistant message ended (pi-ai); `deferred` is pi 1.x's, never produced by Arbor, kept by imports and treated as finished. */
export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

/** A user message. `content` is a string or text/image blocks. */
export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

/** An assistant message: streamed content blocks plus provenance, usage and stop reason. */
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  responseId?: string;
  /** The model id the provider reported in its response, when it differs or is more specific (e.g. a dated snapshot). Source: pi-ai. */
  responseModel?: string;
  timestamp: number;
}

/** The result of one tool call. `details` is tool-specific and never sent to the model. */
export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: unknown;
  isError: boolean;
  timestamp: number;
}

/** An application-defined message; sent to the model as a user message. Source: pi. */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
  timestamp: number;
}

/** A user-run shell command (pi's `!cmd`). */
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | null | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  excludeFromContext?: boolean;
  timestamp: number;
}

/** Synthetic: the latest compaction's summary, placed first in a context. */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/** Synthetic: the summary of an abandoned branch. `fromId` is an entry id or `"root"`. */
export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

/**
 * pi 1.x's system message: a patch of the system prompt and tool set, replayed in order (`content` replaces the prompt, `sections` patch named
 * sections, `null` removes one). Arbor keeps it (import, export) and puts it in the context where pi 1.6 does (its `buildSessionContext`), but does
 * not apply it: its harness builds the system prompt and `convertToLlm` drops system messages.
 */
export interface SystemMessage {
  role: "system";
  content?: string | (TextContent | ImageContent)[];
  sections?: Record<string, string | null>;
  toolsAdded?: unknown[];
  toolsRemoved?: string[];
  timestamp?: number;
}

/** Any message Arbor stores or sends. */
export type AgentMessage =
  | SystemMessage
  | UserMessage
  | AssistantMessage
  | ToolResultMessage
  | CustomMessage
  | BashExecutionMessage
  | CompactionSummaryMessage
  | BranchSummaryMessage;

/** Message roles. */
export type MessageRole = AgentMessage["role"];

/** Thinking (reasoning effort) levels. `off` disables reasoning. Source: pi. */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

/**
 * All thinking levels, in increasing effort.
 * @example
 * if (!THINKING_LEVELS.includes(level)) throw new Error(`thinking level: one of ${THINKING_LEVELS.join(", ")}`);
 */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/**
 * Usage with every count unknown.
 * @example
 * const usage = reported ?? unknownUsage(); // every count null, never 0
 */
export function unknownUsage(): Usage {
  return { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null };
}

/**
 * The text of a message's text blocks, joined with newlines (images and tool calls are skipped).
 * @example
 * messageText({ role: "user", content: [{ type: "text", text: "hi" }], timestamp: Date.now() }); // "hi"
 */
export function messageText(message: AgentMessage): string {
  switch (message.role) {
    case "user":
    case "custom":
      return typeof message.content === "string"
        ? message.content
        : message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
    case "assistant":
    case "toolResult":
      return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
    case "bashExecution":
      return message.output;
    case "compactionSummary":
    case "branchSummary":
      return message.summary;
    case "system":
      return typeof message.content === "string" ? message.content : (message.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
  }
}

/**
 * Folds AI SDK stream parts into Arbor {@link ModelStreamEvent}s and the assistant message they build (`partial` is live, not a copy). Blocks come
 * one at a time in content order; deltas with unknown ids continue the open block of their kind (Copilot rotates ids); tool-call input is buffered
 * per call id and never glued across calls, unparsable arguments give `{}` plus `argumentsError`; finish reasons map to stop/length/toolUse/error;
 * provider-executed tool calls are ignored.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall } from "../../core/messages.ts";
import type { ModelErrorInfo, ModelStreamEvent } from "../../core/model-stream.ts";
import { encodeProviderMetadata } from "./to-model-messages.ts";
import type { ModelCost } from "./usage.ts";
import { toUsage } from "./usage.ts";
import type { DeltaKind } from "../../core/vocabulary.ts";

type Metadata = Record<string, Record<string, unknown>>;

/** Chat Completions delta fields that carry reasoning text (pi 0.73.1's list, in its order). */
export const RAW_REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_text"] as const;

interface OpenBlock {
  kind: DeltaKind;
  index: number;
  id: string;
}

interface ToolBuffer {
  index: number;
  name: string;
  input: string;
  ended: boolean;
  /** The provider's own final input arrived (a `tool-call` part). */
  final: boolean;
  metadata?: Metadata;
}

function mergeMetadata(into: Metadata | undefined, next: unknown): Metadata | undefined {
  if (typeof next !== "object" || next === null) return into;
  const merged: Metadata = { ...into };
  for (const [provider, values] of Object.entries(next as Record<string, unknown>)) {
    if (typeof values !== "object" || values === null) continue;
    const current = { ...merged[provider] };
    for (const [key, value] of Object.entries(values)) if (value !== null && value !== undefined) current[key] = value;
    merged[provider] = current;
  }
  return merged;
}

/**
 * Parse tool-call arguments and say what is wrong with them (ours): a JSON object gives `{ arguments }`; empty input gives `{ arguments: {} }` (a
 * call without parameters); anything else gives `{ arguments: {}, error }`, where `error` names the parse failure and quotes the start of the text
 * (at most 200 characters).
 */
export function checkToolArguments(input: string): { arguments: Record<string, unknown>; error?: string } {
  if (input.trim() === "") return { arguments: {} };
  const quoted = input.length > 200 ? `${input.slice(0, 200)}… (${input.length} characters)` : input;
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch (error) {
    return { arguments: {}, error: `not valid JSON (${(error as Error).message}): ${quoted}` };
  }
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return { arguments: parsed as Record<string, unknown> };
  const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`;
  return { arguments: {}, error: `not a JSON object (${kind}): ${quoted}` };
}

/** Sets a call's arguments from its text, recording or clearing `argumentsError`. */
function setArguments(block: ToolCall, input: string): void {
  const checked = checkToolArguments(input);
  block.arguments = checked.arguments;
  if (checked.error === undefined) delete block.argumentsError;
  else block.argumentsError = checked.error;
}

/** Builds one assistant message from stream parts; see the module contract. */
export class StreamAssembler {
  readonly message: AssistantMessage;
  private open: OpenBlock | undefined;
  private readonly textIds = new Map<string, number>();
  private readonly thinkingIds = new Map<string, number>();
  private readonly tools = new Map<string, ToolBuffer>();
  private readonly metadata = new Map<number, Metadata>();
  private finishReason: { unified: string; raw: string | undefined } | undefined;
  private pendingText: { id: string; metadata: Metadata | undefined } | undefined;

  private rawReasoningBlocks = 0;

  /**
   * @param base - provenance copied into the message.
   * @param cost - prices in $ per million tokens, for `usage.cost`.
   * @param options.chatReasoningFields - read `reasoning_content` / `reasoning` / `reasoning_text`
   *   from raw Chat Completions chunks (DeepSeek, xAI, vLLM, llama.cpp…), as pi does; for
   *   providers whose AI SDK package does not parse them (`openai.chat`). Needs `raw` parts.
   */
  constructor(
    base: Pick<AssistantMessage, "api" | "provider" | "model">,
    private readonly cost?: ModelCost,
    private readonly options: { chatReasoningFields?: boolean } = {},
  ) {
    this.message = {
      role: "assistant",
      content: [],
      api: base.api,
      provider: base.provider,
      model: base.model,
      usage: toUsage(undefined),
      stopReason: "stop",
      timestamp: Date.now(),
    };
  }

  /** The `start` event. */
  start(): ModelStreamEvent {
    return { type: "start", partial: this.message };
  }

  /** Fold one part; returns the events it produced (possibly none). */
  handle(part: LanguageModelV4StreamPart): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    switch (part.type) {
      case "text-start":
        // Text blocks open lazily, on the first non-empty delta: providers send empty text parts.
        this.closeOpen(events);
        this.pendingText = { id: part.id, metadata: mergeMetadata(undefined, part.providerMetadata) };
        break;
      case "text-delta":
        if (part.delta.length === 0) {
          if (this.pendingText?.id === part.id) this.pendingText.metadata = mergeMetadata(this.pendingText.metadata, part.providerMetadata);
          break;
        }
        if (this.pendingText && (this.pendingText.id === part.id || !this.textIds.has(part.id))) {
          const pending = this.pendingText;
          this.pendingText = undefined;
          const index = this.openText("text", part.id, events, pending.metadata);
          if (pending.id !== part.id) this.textIds.set(pending.id, index);
        }
        this.delta("text", part.id, part.delta, events, part.providerMetadata);
        break;
      case "text-end":
        if (this.pendingText?.id === part.id) {
          this.pendingText = undefined;
          break;
        }
        this.endKind("text", part.id, events, part.providerMetadata);
        break;
      case "reasoning-start":
        this.openText("thinking", part.id, events, part.providerMetadata);
        break;
      case "reasoning-delta":
        this.delta("thinking", part.id, part.delta, events, part.providerMetadata);
        break;
      case "reasoning-end":
        this.endKind("thinking", part.id, events, part.providerMetadata);
        break;
      case "tool-input-start":
        if (part.providerExecuted) break;
        this.openTool(part.id, part.toolName, events, part.providerMetadata);
        break;
      case "tool-input-delta": {
        const tool = this.tools.get(part.id);
        if (!tool) break;
        tool.input += part.delta;
        events.push({ type: "toolcall-delta", contentIndex: tool.index, id: part.id, delta: part.delta, partial: this.message });
        break;
      }
      case "tool-input-end": {
        const tool = this.tools.get(part.id);
        if (tool) tool.metadata = mergeMetadata(tool.metadata, part.providerMetadata);
        break;
      }
      case "tool-call": {
        if (part.providerExecuted) break;
        let tool = this.tools.get(part.toolCallId);
        if (!tool) {
          tool = this.openTool(part.toolCallId, part.toolName, events, part.providerMetadata);
          if (part.input.length > 0) {
            tool.input = part.input;
            events.push({ type: "toolcall-delta", contentIndex: tool.index, id: part.toolCallId, delta: part.input, partial: this.message });
          }
        }
        tool.metadata = mergeMetadata(tool.metadata, part.providerMetadata);
        if (part.input.trim() !== "") tool.final = true;
        this.endTool(part.toolCallId, tool, events, part.input);
        break;
      }
      case "response-metadata":
        if (part.id) this.message.responseId = part.id;
        if (part.modelId) this.message.responseModel = part.modelId;
        break;
      case "raw":
        if (this.options.chatReasoningFields) this.rawReasoning(part.rawValue, events);
        break;
      case "finish":
        this.closeOpen(events);
        this.message.usage = toUsage(part.usage, this.cost);
        this.finishReason = part.finishReason;
        break;
      default:
        break;
    }
    return events;
  }

  /** End every open block and every unfinished tool call (from its buffer). */
  closeAll(): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    this.closeOpen(events);
    for (const [id, tool] of this.tools) {
      if (!tool.ended) this.endTool(id, tool, events, undefined);
      // Ended early, then more deltas arrived (interleaved calls): the whole buffer counts.
      else if (!tool.final) setArguments(this.message.content[tool.index] as ToolCall, tool.input);
    }
    return events;
  }

  /** The terminal `done` event for a stream that finished normally. */
  done(): ModelStreamEvent {
    const hasToolCalls = this.message.content.some((block) => block.type === "toolCall");
    const unified = this.finishReason?.unified ?? "other";
    let stopReason: StopReason;
    switch (unified) {
      case "stop":
      case "other":
        stopReason = hasToolCalls ? "toolUse" : "stop";
        break;
      case "length":
        stopReason = "length";
        break;
      case "tool-calls":
        stopReason = "toolUse";
        break;
      case "content-filter":
        return this.error("The provider stopped the response (content filter)", { retryable: false }, "error");
      case "interrupted":
        // Spec v4: the provider's stream ended without its completion signal; the output may be cut short.
        return this.error("The provider's stream ended without a completion signal (finish reason interrupted); the response may be incomplete", { retryable: true }, "error");
      default:
        return this.error(`The provider ended the response with finish reason "${this.finishReason?.raw ?? unified}"`, { retryable: false }, "error");
    }
    this.message.stopReason = stopReason;
    return { type: "done", message: this.message };
  }

  /** The terminal `error` event; partial content is kept. */
  error(errorMessage: string, info: ModelErrorInfo, stopReason: "error" | "aborted"): ModelStreamEvent {
    this.message.stopReason = stopReason;
    this.message.errorMessage = errorMessage;
    return { type: "error", message: this.message, error: info };
  }

  private openText(kind: "text" | "thinking", id: string, events: ModelStreamEvent[], metadata: unknown): number {
    this.closeOpen(events);
    const index = this.message.content.length;
    const block: TextContent | ThinkingContent = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" };
    this.message.content.push(block);
    (kind === "text" ? this.textIds : this.thinkingIds).set(id, index);
    this.open = { kind, index, id };
    this.addMetadata(index, metadata);
    events.push({ type: kind === "text" ? "text-start" : "thinking-start", contentIndex: index, partial: this.message });
    return index;
  }

  private delta(kind: "text" | "thinking", id: string, delta: string, events: ModelStreamEvent[], metadata: unknown): void {
    const known = this.indexOf(kind, id);
    let index: number;
    if (this.open?.kind === kind && (known === undefined || known === this.open.index)) index = this.open.index;
    else if (known !== undefined) index = known;
    else index = this.openText(kind, id, events, undefined);
    this.addMetadata(index, metadata);
    const block = this.message.content[index] as TextContent | ThinkingContent;
    if (block.type === "text") block.text += delta;
    else block.thinking += delta;
    events.push({ type: kind === "text" ? "text-delta" : "thinking-delta", contentIndex: index, delta, partial: this.message });
  }

  private endKind(kind: "text" | "thinking", id: string, events: ModelStreamEvent[], metadata: unknown): void {
    const index = this.indexOf(kind, id);
    if (index !== undefined) this.addMetadata(index, metadata);
    if (this.open?.kind === kind && (index === undefined || index === this.open.index)) {
      if (index === undefined) this.addMetadata(this.open.index, metadata);
      this.closeOpen(events);
    }
  }

  private indexOf(kind: "text" | "thinking", id: string): number | undefined {
    return (kind === "text" ? this.textIds : this.thinkingIds).get(id);
  }

  private openTool(id: string, name: string, events: ModelStreamEvent[], metadata: unknown): ToolBuffer {
    const existing = this.tools.get(id);
    if (existing) return existing;
    this.closeOpen(events);
    const index = this.message.content.length;
    this.message.content.push({ type: "toolCall", id, name, arguments: {} });
    const tool: ToolBuffer = { index, name, input: "", ended: false, final: false, metadata: mergeMetadata(undefined, metadata) };
    this.tools.set(id, tool);
    this.open = { kind: "toolCall", index, id };
    events.push({ type: "toolcall-start", contentIndex: index, id, name, partial: this.message });
    return tool;
  }

  private endTool(id: string, tool: ToolBuffer, events: ModelStreamEvent[], finalInput: string | undefined): void {
    const block = this.message.content[tool.index] as ToolCall;
    if (tool.ended) {
      // Ended early (another block started first); the provider's final input wins.
      if (finalInput !== undefined && finalInput.trim() !== "") setArguments(block, finalInput);
      if (tool.metadata) block.thoughtSignature = encodeProviderMetadata(tool.metadata) ?? block.thoughtSignature;
      return;
    }
    tool.ended = true;
    setArguments(block, finalInput !== undefined && finalInput.trim() !== "" ? finalInput : tool.input);
    const signature = encodeProviderMetadata(tool.metadata);
    if (signature) block.thoughtSignature = signature;
    if (this.open?.kind === "toolCall" && this.open.id === id) this.open = undefined;
    events.push({ type: "toolcall-end", contentIndex: tool.index, toolCall: block, partial: this.message });
  }

  private closeOpen(events: ModelStreamEvent[]): void {
    this.pendingText = undefined;
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    if (open.kind === "toolCall") {
      // Another block starts: end this call from its buffer (one block at a time); a later `tool-call` part for it only refines the arguments.
      const tool = this.tools.get(open.id);
      if (tool) this.endTool(open.id, tool, events, undefined);
      return;
    }
    const block = this.message.content[open.index] as TextContent | ThinkingContent;
    const signature = encodeProviderMetadata(this.metadata.get(open.index));
    if (block.type === "text") {
      if (signature) block.textSignature = signature;
      events.push({ type: "text-end", contentIndex: open.index, partial: this.message });
    } else {
      if (signature) block.thinkingSignature = signature;
      if (this.metadata.get(open.index)?.anthropic?.redactedData !== undefined) block.redacted = true;
      events.push({ type: "thinking-end", contentIndex: open.index, partial: this.message });
    }
  }

  /** pi's rule: the first non-empty of `reasoning_content`, `reasoning`, `reasoning_text` on the delta. */
  private rawReasoning(raw: unknown, events: ModelStreamEvent[]): void {
    const delta = (raw as { choices?: { delta?: Record<string, unknown> }[] } | null)?.choices?.[0]?.delta;
    if (!delta || typeof delta !== "object") return;
    const field = RAW_REASONING_FIELDS.find((name) => typeof delta[name] === "string" && (delta[name] as string).length > 0);
    if (!field) return;
    const text = delta[field] as string;
    let index: number;
    if (this.open?.kind === "thinking" && this.open.id.startsWith("chat-reasoning:")) index = this.open.index;
    else {
      index = this.openText("thinking", `chat-reasoning:${this.rawReasoningBlocks++}`, events, undefined);
      (this.message.content[index] as ThinkingContent).thinkingSignature = field;
    }
    (this.message.content[index] as ThinkingContent).thinking += text;
    events.push({ type: "thinking-delta", contentIndex: index, delta: text, partial: this.message });
  }

  private addMetadata(index: number, metadata: unknown): void {
    const merged = mergeMetadata(this.metadata.get(index), metadata);
    if (merged) this.metadata.set(index, merged);
  }
}

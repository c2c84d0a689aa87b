/**
 * The only place Arbor messages become AI SDK `ModelMessage`s (pi-ai's `transformMessages` rules, `docs/pi-parity.md`). Errored and aborted
 * assistants are skipped; provider metadata round-trips as `providerOptions`; for another model, signatures drop and thinking becomes text, tool-call
 * ids are made portable; a call without a result gets "No result provided", an orphan result is dropped; lone surrogates become U+FFFD. Never
 * mutates its input or throws.
 */
import type { AssistantModelMessage, ModelMessage, ToolModelMessage, ToolResultPart, UserModelMessage } from "ai";
import type { AgentMessage, AssistantMessage, ImageContent, TextContent, ToolResultMessage } from "../../core/messages.ts";
import { messageText } from "../../core/messages.ts";

export type { ProviderOptionsRecord } from "./provider-options.ts";
import type { ProviderOptionsRecord } from "./provider-options.ts";

/** The model a conversation is being sent to; decides whether signatures are kept. */
export interface ModelTarget {
  provider: string;
  api: string;
  modelId: string;
}

/** ES2024 string methods (Node >= 20; this project's `lib` is ES2023). */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** Replaces unpaired UTF-16 surrogates with U+FFFD: providers reject them (pi's `sanitizeSurrogates`). */
export function wellFormed(text: string): string {
  // Malformed input (not a string) passes through unchanged: the SDK's validation rejects it with its own error.
  if (typeof text !== "string") return text;
  // ES2024's native check and repair (Node >= 20): the same replacement as the regex, far cheaper on long histories.
  const native = text as string & WellFormedString;
  return native.isWellFormed() ? text : native.toWellFormed();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Encode AI SDK provider metadata into a signature string (JSON), or undefined when there is nothing worth keeping (every value empty/null). */
export function encodeProviderMetadata(metadata: Record<string, unknown> | undefined): string | undefined {
  if (!metadata) return undefined;
  const kept: Record<string, Record<string, unknown>> = {};
  for (const [provider, values] of Object.entries(metadata)) {
    if (!isRecord(values)) continue;
    const entries = Object.entries(values).filter(([, value]) => value !== null && value !== undefined);
    if (entries.length > 0) kept[provider] = Object.fromEntries(entries);
  }
  return Object.keys(kept).length > 0 ? JSON.stringify(kept) : undefined;
}

/**
 * Decode a stored signature into AI SDK provider options. Understands our JSON (`{ provider: {...} }`), pi's OpenAI Responses reasoning item JSON,
 * and a bare string (taken as an Anthropic signature, or redacted data when `redacted`).
 */
export function decodeSignature(signature: string | undefined, options: { redacted?: boolean } = {}): ProviderOptionsRecord | undefined {
  if (!signature) return undefined;
  // pi's Chat Completions convention: the signature names the delta field the reasoning came in.
  if (signature === "reasoning_content" || signature === "reasoning" || signature === "reasoning_text") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(signature);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed)) {
    if (parsed.type === "reasoning" && typeof parsed.id === "string") {
      return {
        openai: {
          itemId: parsed.id,
          ...(typeof parsed.encrypted_content === "string" ? { reasoningEncryptedContent: parsed.encrypted_content } : {}),
        },
      };
    }
    if (Object.values(parsed).every(isRecord)) return parsed as ProviderOptionsRecord;
    return undefined;
  }
  return options.redacted ? { anthropic: { redactedData: signature } } : { anthropic: { signature } };
}

function userParts(content: string | (TextContent | ImageContent)[]): UserModelMessage["content"] {
  if (typeof content === "string") return wellFormed(content);
  const parts: Exclude<UserModelMessage["content"], string> = [];
  for (const block of content) {
    if (block.type === "image") parts.push({ type: "image", image: block.data, mediaType: block.mimeType });
    else if (block.text.length > 0) parts.push({ type: "text", text: wellFormed(block.text) });
  }
  return parts;
}

function sameModel(message: AssistantMessage, target: ModelTarget | undefined): boolean {
  if (!target) return true;
  return message.provider === target.provider && message.api === target.api && message.model === target.modelId;
}

/** FNV-1a, 32 bit, as 8 hex digits: a stable short suffix for shortened ids. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * The tool-call id to send. pi's OpenAI Responses ids are `call_id|item_id`: the call id is sent (the item id goes to providerOptions). For another
 * model the id is made portable: only `[A-Za-z0-9_-]`, at most 40 characters (OpenAI's limit; Anthropic allows 64), with a hash suffix when shortened
 * so distinct ids stay distinct.
 */
function wireToolCallId(id: string, keepSignatures: boolean): string {
  const callId = id.includes("|") ? id.slice(0, id.indexOf("|")) : id;
  if (keepSignatures) return callId;
  const portable = callId.replace(/[^A-Za-z0-9_-]/g, "_");
  return portable.length <= 40 ? portable : `${portable.slice(0, 31)}_${shortHash(callId)}`;
}

/** A tool call of the open batch: its id in the log, the id sent, its name, whether a result was kept. */
interface PendingCall {
  id: string;
  wireId: string;
  name: string;
  answered: boolean;
}

/** The assistant's model message; its tool calls are appended to `calls`. */
function assistantMessage(message: AssistantMessage, target: ModelTarget | undefined, calls: PendingCall[]): AssistantModelMessage {
  const keepSignatures = sameModel(message, target);
  const content: Exclude<AssistantModelMessage["content"], string> = [];
  for (const block of message.content) {
    if (block.type === "text") {
      if (block.text.length === 0) continue;
      const providerOptions = keepSignatures ? decodeSignature(block.textSignature) : undefined;
      content.push(providerOptions ? { type: "text", text: wellFormed(block.text), providerOptions } : { type: "text", text: wellFormed(block.text) });
    } else if (block.type === "thinking") {
      if (!keepSignatures) {
        if (block.redacted || block.thinking.trim() === "") continue;
        content.push({ type: "text", text: wellFormed(block.thinking) });
        continue;
      }
      const providerOptions = decodeSignature(block.thinkingSignature, { redacted: block.redacted });
      if (!providerOptions && block.thinking.trim() === "") continue;
      const text = block.redacted ? "" : wellFormed(block.thinking);
      content.push(providerOptions ? { type: "reasoning", text, providerOptions } : { type: "reasoning", text });
    } else {
      let providerOptions = keepSignatures ? decodeSignature(block.thoughtSignature) : undefined;
      const pipe = block.id.indexOf("|");
      if (keepSignatures && pipe > 0 && !providerOptions) providerOptions = { openai: { itemId: block.id.slice(pipe + 1) } };
      const toolCallId = wireToolCallId(block.id, keepSignatures);
      calls.push({ id: block.id, wireId: toolCallId, name: block.name, answered: false });
      content.push(
        providerOptions
          ? { type: "tool-call", toolCallId, toolName: block.name, input: block.arguments, providerOptions }
          : { type: "tool-call", toolCallId, toolName: block.name, input: block.arguments },
      );
    }
  }
  return { role: "assistant", content };
}

/** The text blocks of a tool result joined by newlines, as `Array.prototype.join` would (one block, the common case: no array). */
function resultText(result: ToolResultMessage): string {
  let text = "";
  let first = true;
  for (const block of result.content) {
    if (block.type !== "text") continue;
    const part: unknown = block.text;
    const piece = part === undefined || part === null ? "" : String(part);
    text = first ? piece : `${text}\n${piece}`;
    first = false;
  }
  return wellFormed(text);
}

function toolResultPart(result: ToolResultMessage, toolCallId: string): ToolResultPart {
  let hasImages = false;
  for (const block of result.content) if (block.type === "image") hasImages = true;
  if (!hasImages) {
    const value = resultText(result);
    return {
      type: "tool-result",
      toolCallId,
      toolName: result.toolName,
      output: result.isError ? { type: "error-text", value } : { type: "text", value },
    };
  }
  const value = result.content.map((block, index) =>
    block.type === "text"
      ? { type: "text" as const, text: wellFormed(result.isError && index === 0 ? `Error: ${block.text}` : block.text) }
      : { type: "image-data" as const, data: block.data, mediaType: block.mimeType },
  );
  if (result.isError && result.content[0]?.type !== "text") value.unshift({ type: "text", text: "Error:" });
  return { type: "tool-result", toolCallId, toolName: result.toolName, output: { type: "content", value } };
}

/**
 * Convert Arbor messages (after `convertToLlm`) into AI SDK `ModelMessage`s, repairing
 * tool-call/result pairing on the way (see the module contract). Never throws.
 * @param messages - user, assistant and toolResult messages in conversation order.
 * @param target - the model being called; assistants from other models lose their signatures.
 * @returns AI SDK messages, without a system message (pass the system prompt separately).
 * @example
 * toModelMessages([{ role: "user", content: "hi", timestamp: 0 }]); // [{ role: "user", content: "hi" }]
 */
export function toModelMessages(messages: readonly AgentMessage[], target?: ModelTarget): ModelMessage[] {
  return toModelMessagesFrom(messages, target, 0).messages;
}

/**
 * What {@link toModelMessagesFrom} converted: the messages of inputs `[start, end)`, and the last clean point: `messages.slice(0, cleanOut)` are
 * final for inputs `[start, clean)` (no later input can change them), so a later conversion of a longer conversation with the same first `clean`
 * inputs may resume at `clean` and reuse them.
 */
export interface ModelMessagesFrom {
  messages: ModelMessage[];
  clean: number;
  cleanOut: number;
}

/**
 * {@link toModelMessages} of `messages.slice(start)`, where `start` must be a clean point of an earlier conversion of the same first `start` messages
 * (or 0), plus the last clean point (ours: the adapter converts only the new suffix of a conversation). Never throws.
 */
export function toModelMessagesFrom(messages: readonly AgentMessage[], target: ModelTarget | undefined, start: number): ModelMessagesFrom {
  const out: ModelMessage[] = [];
  const { clean, cleanOut } = eachModelMessageFrom(messages, target, start, (message) => out.push(message));
  return { messages: out, clean, cleanOut };
}

/**
 * {@link toModelMessagesFrom} without the array (ours): `emit` receives each converted message once it is final, in order (a tool message when its
 * batch closes), so a caller that turns each one into something else at once lets it die young instead of holding a second copy of a long history.
 * Returns the last clean point; `cleanOut` counts emitted messages. Never throws (unless `emit` does).
 */
export function eachModelMessageFrom(
  messages: readonly AgentMessage[],
  target: ModelTarget | undefined,
  start: number,
  emit: (message: ModelMessage) => void,
): { clean: number; cleanOut: number } {
  let emitted = 0;
  let clean = start;
  let cleanOut = 0;
  // The calls of the open batch (one array for the whole conversion, emptied when a batch closes).
  const pending: PendingCall[] = [];
  let toolMessage: ToolModelMessage | undefined;
  const addResult = (part: ToolResultPart) => {
    if (toolMessage === undefined) toolMessage = { role: "tool", content: [part] };
    else toolMessage.content.push(part);
  };

  const closeToolBatch = () => {
    for (const call of pending) {
      if (!call.answered) addResult({ type: "tool-result", toolCallId: call.wireId, toolName: call.name, output: { type: "error-text", value: "No result provided" } });
    }
    if (toolMessage !== undefined) {
      emit(toolMessage);
      emitted++;
    }
    pending.length = 0;
    toolMessage = undefined;
  };
  const push = (message: ModelMessage) => {
    emit(message);
    emitted++;
  };

  for (let index = start; index < messages.length; index++) {
    const message = messages[index];
    if (message.role !== "toolResult") {
      // A user or assistant message closes the open batch: everything before it is final.
      if (pending.length > 0 || toolMessage !== undefined) closeToolBatch();
      clean = index;
      cleanOut = emitted;
    }
    if (message.role === "assistant") {
      if (message.stopReason === "error" || message.stopReason === "aborted") continue;
      // Its tool calls open the batch (an assistant with a call always has content, so is kept).
      const converted = assistantMessage(message, target, pending);
      if (converted.content.length === 0) continue;
      push(converted);
    } else if (message.role === "toolResult") {
      const call = pending.find((candidate) => candidate.id === message.toolCallId);
      if (!call || call.answered) continue;
      // Every call of that id is answered by this result (a repeated id is answered once).
      for (const other of pending) if (other.id === call.id) other.answered = true;
      addResult(toolResultPart(message, call.wireId));
    } else {
      if (message.role === "user" || message.role === "custom") {
        const content = userParts(message.content);
        if (content.length > 0) push({ role: "user", content });
      } else {
        const text = wellFormed(messageText(message));
        if (text.length > 0) push({ role: "user", content: text });
      }
    }
  }
  if (pending.length > 0 || toolMessage !== undefined) closeToolBatch();
  return { clean, cleanOut };
}

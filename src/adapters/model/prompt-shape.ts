/**
 * A cheap, conservative check that a `ModelMessage` is accepted by the AI SDK's `modelMessageSchema`, for the shapes `toModelMessagesFrom` emits.
 * `true` means the schema accepts it; `false` means "not sure" and the caller asks the SDK's schema. So a long history is checked with `typeof`
 * tests, not zod.
 */
import type { ModelMessage } from "ai";

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The schema's `jsonValueSchema`: null, string, finite number, boolean, arrays and plain records of them. */
function isJsonValue(value: unknown, depth: number): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (depth > 64) return false;
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (!isPlainRecord(value)) return false;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item !== undefined && !isJsonValue(item, depth + 1)) return false;
  }
  return true;
}

/** Optional `providerMetadataSchema`: a record of records of JSON values. */
function isProviderOptions(value: unknown): boolean {
  if (value === undefined) return true;
  if (!isPlainRecord(value)) return false;
  for (const key of Object.keys(value)) if (!isJsonValue(value[key], 0) || !isPlainRecord(value[key])) return false;
  return true;
}

function isPart(value: unknown): value is Record<string, unknown> {
  return isPlainRecord(value) && isProviderOptions(value.providerOptions);
}

function isTextPart(part: Record<string, unknown>): boolean {
  return part.type === "text" && typeof part.text === "string";
}

function isUserPart(part: unknown): boolean {
  if (!isPart(part)) return false;
  if (part.type === "image") return typeof part.image === "string" && (part.mediaType === undefined || typeof part.mediaType === "string");
  return isTextPart(part);
}

function isAssistantPart(part: unknown): boolean {
  if (!isPart(part)) return false;
  if (part.type === "tool-call") {
    return typeof part.toolCallId === "string" && typeof part.toolName === "string" && (part.providerExecuted === undefined || typeof part.providerExecuted === "boolean");
  }
  return isTextPart(part) || (part.type === "reasoning" && typeof part.text === "string");
}

function isOutputItem(item: unknown): boolean {
  if (!isPart(item)) return false;
  if (item.type === "image-data") return typeof item.data === "string" && typeof item.mediaType === "string";
  return isTextPart(item);
}

function isToolResultPart(part: unknown): boolean {
  if (!isPart(part) || part.type !== "tool-result" || typeof part.toolCallId !== "string" || typeof part.toolName !== "string") return false;
  const output = part.output;
  if (!isPart(output)) return false;
  if (output.type === "text" || output.type === "error-text") return typeof output.value === "string";
  return output.type === "content" && Array.isArray(output.value) && output.value.every(isOutputItem);
}

/** Whether `message` certainly matches the AI SDK's `modelMessageSchema`; `false` when unsure. Never throws or mutates. */
export function conformsToModelMessage(message: ModelMessage): boolean {
  const value: unknown = message;
  if (!isPart(value)) return false;
  const content = value.content;
  if (value.role === "user") return typeof content === "string" || (Array.isArray(content) && content.every(isUserPart));
  if (value.role === "assistant") return typeof content === "string" || (Array.isArray(content) && content.every(isAssistantPart));
  if (value.role === "tool") return Array.isArray(content) && content.every(isToolResultPart);
  return false;
}

/**
 * Test helpers for the model adapter: collect a stream, build requests, locate fixtures.
 */
import { join } from "node:path";
import { unknownUsage, type AssistantMessage } from "../../src/core/messages.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../src/core/model-stream.ts";
import { sharedPath } from "../shared-dir.ts";

/** The recorded OpenAI-format fixtures (read-only, third-party data). */
export const FIXTURES = sharedPath("real-inputs/openai-fixtures");

/** Absolute path of a fixture file. */
export const fixture = (name: string): string => join(FIXTURES, name);

/** A one-user-message request. */
export function userRequest(text = "hi", extra: Partial<ModelRequest> = {}): ModelRequest {
  return { messages: [{ role: "user", content: text, timestamp: 0 }], tools: [], ...extra };
}

/** Drain a stream; returns every event and the terminal one. */
export async function collect(
  client: ModelClient,
  request: ModelRequest,
  options: { signal?: AbortSignal } = {},
): Promise<{ events: ModelStreamEvent[]; terminal: ModelStreamEvent; message: AssistantMessage }> {
  const events: ModelStreamEvent[] = [];
  for await (const event of client.stream(request, options)) events.push(event);
  const terminal = events[events.length - 1];
  if (terminal.type !== "done" && terminal.type !== "error") throw new Error(`stream ended without a terminal event: ${terminal.type}`);
  return { events, terminal, message: terminal.message };
}

/** An OpenAI Responses assistant message of `content` (stop reason `toolUse` when it calls a tool), with `extra` over it. */
export const assistant = (content: AssistantMessage["content"], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content,
  api: "openai-responses",
  provider: "openai",
  model: "gpt-test",
  usage: unknownUsage(),
  stopReason: content.some((block) => block.type === "toolCall") ? "toolUse" : "stop",
  timestamp: 0,
  ...extra,
});

/**
 * Renders a scripted model turn as Anthropic Messages SSE and Gemini `streamGenerateContent` SSE for the loopback server (shapes from the vercel/ai
 * recordings). Usage is given in OpenAI's accounting and rendered in each provider's own (Anthropic excludes cache tokens from input, Gemini
 * includes them), which is what the accounting tests compare. `final: false` stops before the finish. Pure.
 */
import type { ScriptedTurn, ScriptedUsage } from "./openai-wire.ts";
import { splitText } from "./openai-wire.ts";

const DEFAULT_USAGE: ScriptedUsage = { input: 10, output: 5 };

function argumentsText(call: { arguments: string | Record<string, unknown> }): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function usageOf(turn: ScriptedTurn): ScriptedUsage | null {
  return turn.usage === undefined ? DEFAULT_USAGE : turn.usage;
}

const ANTHROPIC_STOP = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", content_filter: "refusal" } as const;

/**
 * Anthropic Messages usage for OpenAI-accounted scripted usage (cache counts taken out of `input_tokens`).
 * @example
 * anthropicUsage({ input: 100, cached: 80, cacheWrite: 15, output: 5 }); // { input_tokens: 5, cache_read_input_tokens: 80, cache_creation_input_tokens: 15, output_tokens: 5 }
 */
export function anthropicUsage(usage: ScriptedUsage): Record<string, number> {
  const cached = usage.cached ?? 0;
  const written = usage.cacheWrite ?? 0;
  return { input_tokens: usage.input - cached - written, cache_creation_input_tokens: written, cache_read_input_tokens: cached, output_tokens: usage.output };
}

/**
 * Anthropic Messages SSE frames for a turn (see the module contract).
 * @example
 * renderAnthropicStream({ toolCalls: [{ id: "toolu_1", name: "read", arguments: { path: "a" } }] }).at(-1); // message_stop
 */
export function renderAnthropicStream(turn: ScriptedTurn, options: { error?: Record<string, unknown>; final?: boolean } = {}): string[] {
  const frames: string[] = [];
  const emit = (type: string, fields: Record<string, unknown>) => frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`);
  const usage = usageOf(turn);
  const full = usage ? anthropicUsage(usage) : { input_tokens: 0, output_tokens: 0 };
  emit("message_start", {
    message: {
      id: turn.id ?? "msg_test",
      type: "message",
      role: "assistant",
      model: turn.model ?? "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...full, output_tokens: 1 },
    },
  });
  let index = 0;
  if (turn.reasoning !== undefined) {
    emit("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    for (const piece of splitText(turn.reasoning, turn.chunkSize)) emit("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } });
    emit("content_block_delta", { index, delta: { type: "signature_delta", signature: turn.encryptedReasoning ?? "sig-test" } });
    emit("content_block_stop", { index });
    index++;
  }
  if (turn.text !== undefined) {
    emit("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const piece of splitText(turn.text, turn.chunkSize)) emit("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
    if (options.final === false && !turn.toolCalls?.length) return frames;
    emit("content_block_stop", { index });
    index++;
  }
  for (const call of turn.toolCalls ?? []) {
    emit("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
    emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } });
    for (const piece of splitText(argumentsText(call), turn.chunkSize ?? 8)) emit("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
    emit("content_block_stop", { index });
    index++;
  }
  if (options.error) {
    emit("error", { error: options.error });
    return frames;
  }
  if (options.final === false) return frames;
  const finish = turn.finishReason ?? (turn.toolCalls?.length ? "tool_calls" : "stop");
  emit("message_delta", { delta: { stop_reason: ANTHROPIC_STOP[finish], stop_sequence: null }, usage: full });
  emit("message_stop", {});
  return frames;
}

const GEMINI_FINISH = { stop: "STOP", length: "MAX_TOKENS", tool_calls: "STOP", content_filter: "SAFETY" } as const;

/**
 * Gemini `usageMetadata` for OpenAI-accounted scripted usage (`reasoning` becomes `thoughtsTokenCount`, outside the candidates).
 * @example
 * geminiUsage({ input: 100, cached: 80, output: 20, reasoning: 5 }); // { promptTokenCount: 100, cachedContentTokenCount: 80, candidatesTokenCount: 15, thoughtsTokenCount: 5, totalTokenCount: 120 }
 */
export function geminiUsage(usage: ScriptedUsage): Record<string, number> {
  const reasoning = usage.reasoning ?? 0;
  return {
    promptTokenCount: usage.input,
    ...(usage.cached !== undefined ? { cachedContentTokenCount: usage.cached } : {}),
    candidatesTokenCount: usage.output - reasoning,
    ...(reasoning > 0 ? { thoughtsTokenCount: reasoning } : {}),
    totalTokenCount: usage.input + usage.output,
  };
}

/**
 * Gemini `streamGenerateContent?alt=sse` frames for a turn (see the module contract).
 * @example
 * renderGeminiStream({ text: "hi" }).length; // 2: one text chunk, one finish chunk
 */
export function renderGeminiStream(turn: ScriptedTurn, options: { error?: Record<string, unknown>; final?: boolean } = {}): string[] {
  const frames: string[] = [];
  const base = { modelVersion: turn.model ?? "gemini-test", responseId: turn.id ?? "gemini-response-test" };
  const emit = (parts: unknown[], extra: Record<string, unknown> = {}) =>
    frames.push(`data: ${JSON.stringify({ candidates: [{ content: { parts, role: "model" }, index: 0, ...extra }], ...base })}\n\n`);
  if (turn.reasoning !== undefined) {
    const pieces = splitText(turn.reasoning, turn.chunkSize);
    pieces.forEach((piece, position) =>
      emit([{ text: piece, thought: true, ...(position === pieces.length - 1 ? { thoughtSignature: turn.encryptedReasoning ?? "c2lnLXRlc3Q=" } : {}) }]),
    );
  }
  for (const piece of splitText(turn.text ?? "", turn.chunkSize)) emit([{ text: piece }]);
  if (options.error) {
    frames.push(`data: ${JSON.stringify({ error: { code: 500, status: "INTERNAL", ...options.error } })}\n\n`);
    return frames;
  }
  if (options.final === false) return frames;
  const calls = (turn.toolCalls ?? []).map((call) => ({ functionCall: { name: call.name, args: typeof call.arguments === "string" ? JSON.parse(call.arguments || "{}") : call.arguments } }));
  const usage = usageOf(turn);
  const finish = turn.finishReason ?? (turn.toolCalls?.length ? "tool_calls" : "stop");
  frames.push(
    `data: ${JSON.stringify({
      candidates: [{ content: { parts: calls.length > 0 ? calls : [{ text: "" }], role: "model" }, finishReason: GEMINI_FINISH[finish], index: 0 }],
      ...(usage ? { usageMetadata: geminiUsage(usage) } : {}),
      ...base,
    })}\n\n`,
  );
  return frames;
}

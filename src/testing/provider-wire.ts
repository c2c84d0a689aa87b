/**
 * Renders a scripted model turn in Anthropic's Messages SSE and Gemini's
 * `streamGenerateContent` SSE, for the loopback test server (beside `openai-wire.ts`).
 *
 * Contract (ours; shapes follow the vercel/ai recordings in `test/fixtures/providers/`):
 * - usage is given in OpenAI's accounting ({@link ScriptedUsage}: `cached` and `cacheWrite` are
 *   PART of `input`) and rendered in each provider's own: Anthropic's `input_tokens` excludes
 *   cache reads (`cache_read_input_tokens`) and writes (`cache_creation_input_tokens`);
 *   Gemini's `promptTokenCount` includes `cachedContentTokenCount`, and its
 *   `candidatesTokenCount` excludes `thoughtsTokenCount` (= `reasoning`). The same logical
 *   usage is so rendered three ways, which is what the accounting tests compare;
 * - Anthropic: `message_start` (with the input usage), then per block `content_block_start`,
 *   deltas (`thinking_delta` + `signature_delta`, `text_delta`, `input_json_delta` pieces),
 *   `content_block_stop`; then `message_delta` (stop reason, usage) and `message_stop`; every
 *   frame has its `event:` line. `error` ends with an `error` event instead of the finish;
 * - Gemini: one `data:` chunk per piece (`thought: true` parts with a `thoughtSignature`, text
 *   parts, whole `functionCall` parts: Gemini sends no call ids, the AI SDK makes them), the
 *   last with `finishReason` and `usageMetadata`; no `[DONE]`;
 * - `final: false` stops before the finish (a hang or reset cuts there); Gemini renders `error` as
 *   an `{"error":…}` chunk. Pure; never throws.
 *
 * @example
 * ```ts
 * renderAnthropicStream({ text: "hi", usage: { input: 100, cached: 80, output: 5 } })[0]; // "event: message_start\ndata: …"
 * ```
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
 *
 * @example
 * ```ts
 * anthropicUsage({ input: 100, cached: 80, cacheWrite: 15, output: 5 }); // { input_tokens: 5, cache_read_input_tokens: 80, cache_creation_input_tokens: 15, output_tokens: 5 }
 * ```
 */
export function anthropicUsage(usage: ScriptedUsage): Record<string, number> {
  const cached = usage.cached ?? 0;
  const written = usage.cacheWrite ?? 0;
  return { input_tokens: usage.input - cached - written, cache_creation_input_tokens: written, cache_read_input_tokens: cached, output_tokens: usage.output };
}

/**
 * Anthropic Messages SSE frames for a turn (see the module contract).
 *
 * @example
 * ```ts
 * renderAnthropicStream({ toolCalls: [{ id: "toolu_1", name: "read", arguments: { path: "a" } }] }).at(-1); // message_stop
 * ```
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
 *
 * @example
 * ```ts
 * geminiUsage({ input: 100, cached: 80, output: 20, reasoning: 5 }); // { promptTokenCount: 100, cachedContentTokenCount: 80, candidatesTokenCount: 15, thoughtsTokenCount: 5, totalTokenCount: 120 }
 * ```
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
 *
 * @example
 * ```ts
 * renderGeminiStream({ text: "hi" }).length; // 2: one text chunk, one finish chunk
 * ```
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

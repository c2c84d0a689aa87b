/**
 * Renders a scripted model turn in OpenAI's wire formats (Chat Completions SSE and JSON, Responses SSE and JSON) for the loopback server, shaped
 * like the recorded fixtures; text is split into `chunkSize` pieces; every SSE chunk is one complete frame. Pure.
 * @example
 * const frames = renderChatStream({ text: "hi" }); // ["data: {...}\n\n", ..., "data: [DONE]\n\n"]
 */

/**
 * One scripted tool call. `arguments` is sent verbatim when a string, else JSON-encoded.
 * @example
 * const call: ScriptedToolCall = { id: "call_1", name: "read", arguments: { path: "a.txt" } };
 */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

/**
 * Usage in tokens, in OpenAI's accounting: `cached` (cache reads) and `cacheWrite` are part of
 * `input`, `reasoning` is part of `output`. Anthropic and Gemini renderings convert it (`provider-wire.ts`).
 * @example
 * const usage: ScriptedUsage = { input: 100, output: 20, cached: 40 };
 */
export interface ScriptedUsage {
  input: number;
  output: number;
  cached?: number;
  /** Tokens written to the prompt cache (Anthropic `cache_creation_input_tokens`; Chat `prompt_tokens_details.cache_write_tokens`). */
  cacheWrite?: number;
  reasoning?: number;
}

/**
 * A model turn to render in whichever wire format the request asked for.
 * @example
 * const turn: ScriptedTurn = { text: "Reading it.", toolCalls: [{ id: "c1", name: "read", arguments: {} }], finishReason: "tool_calls" };
 */
export interface ScriptedTurn {
  text?: string;
  /** Reasoning summary text (Responses only; ignored on Chat Completions). */
  reasoning?: string;
  /** Opaque encrypted reasoning (Responses only). */
  encryptedReasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
  /** Default `{ input: 10, output: 5 }`; `null` sends no usage. */
  usage?: ScriptedUsage | null;
  /** Default `gpt-test`. */
  model?: string;
  /** Response id; default a fixed `resp_test` / `chatcmpl-test`. */
  id?: string;
  /** Characters per text/argument delta; default word by word. */
  chunkSize?: number;
}

const CREATED = 1_764_460_800;

/**
 * Split text into deltas: fixed-size pieces, or words with their trailing spaces.
 * @example
 * splitText("a bc d"); // ["a ", "bc ", "d"]
 */
export function splitText(text: string, chunkSize?: number): string[] {
  if (text.length === 0) return [];
  if (chunkSize && chunkSize > 0) {
    const pieces: string[] = [];
    for (let offset = 0; offset < text.length; offset += chunkSize) pieces.push(text.slice(offset, offset + chunkSize));
    return pieces;
  }
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function frame(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

function finishReasonOf(turn: ScriptedTurn): string {
  return turn.finishReason ?? (turn.toolCalls && turn.toolCalls.length > 0 ? "tool_calls" : "stop");
}

function chatUsage(usage: ScriptedUsage) {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, ...(usage.cacheWrite !== undefined ? { cache_write_tokens: usage.cacheWrite } : {}) },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
  };
}

/**
 * Chat Completions SSE frames for a turn; `error` replaces the finish with an error chunk.
 * @example
 * renderChatStream({ text: "hi" }).at(-1); // "data: [DONE]\n\n"
 */
export function renderChatStream(turn: ScriptedTurn, options: { error?: Record<string, unknown>; final?: boolean } = {}): string[] {
  const id = turn.id ?? "chatcmpl-test";
  const model = turn.model ?? "gpt-test";
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: "chat.completion.chunk",
    created: CREATED,
    model,
    choices,
    ...extra,
  });
  const delta = (value: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }]);
  const frames = [frame(delta({ role: "assistant", content: "" }))];
  for (const piece of splitText(turn.text ?? "", turn.chunkSize)) frames.push(frame(delta({ content: piece })));
  (turn.toolCalls ?? []).forEach((call, index) => {
    frames.push(frame(delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })));
    for (const piece of splitText(argumentsText(call), turn.chunkSize ?? 8)) {
      frames.push(frame(delta({ tool_calls: [{ index, function: { arguments: piece } }] })));
    }
  });
  if (options.error) {
    frames.push(frame({ error: options.error }));
    return frames;
  }
  if (options.final === false) return frames;
  frames.push(frame(delta({}, finishReasonOf(turn))));
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  if (usage) frames.push(frame(chunk([], { usage: chatUsage(usage) })));
  frames.push(frame("[DONE]"));
  return frames;
}

/**
 * A non-streaming Chat Completions body.
 * @example
 * renderChatJson({ text: "hi" }).object; // "chat.completion"
 */
export function renderChatJson(turn: ScriptedTurn): Record<string, unknown> {
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: argumentsText(call) } }));
  return {
    id: turn.id ?? "chatcmpl-test",
    object: "chat.completion",
    created: CREATED,
    model: turn.model ?? "gpt-test",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: turn.text ?? null, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finishReasonOf(turn),
      },
    ],
    ...(usage ? { usage: chatUsage(usage) } : {}),
  };
}

/**
 * Responses API SSE frames for a turn; `error` ends with an `error` event and `response.failed`.
 * @example
 * renderResponsesStream({ text: "hi" })[0]; // a response.created frame
 */
export function renderResponsesStream(turn: ScriptedTurn, options: { error?: Record<string, unknown>; final?: boolean } = {}): string[] {
  const id = turn.id ?? "resp_test";
  const model = turn.model ?? "gpt-test";
  let sequence = 0;
  const frames: string[] = [];
  const emit = (type: string, fields: Record<string, unknown>) => frames.push(frame({ type, sequence_number: sequence++, ...fields }));
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id,
    object: "response",
    created_at: CREATED,
    status,
    error: null,
    incomplete_details: null,
    model,
    output: [],
    service_tier: "default",
    usage: null,
    ...extra,
  });
  emit("response.created", { response: response("in_progress") });
  emit("response.in_progress", { response: response("in_progress") });
  let outputIndex = 0;
  const output: unknown[] = [];

  if (turn.reasoning !== undefined || turn.encryptedReasoning !== undefined) {
    const itemId = `rs_${id}_${outputIndex}`;
    const encrypted = turn.encryptedReasoning ?? null;
    emit("response.output_item.added", { output_index: outputIndex, item: { id: itemId, type: "reasoning", summary: [], encrypted_content: encrypted } });
    const summary: unknown[] = [];
    if (turn.reasoning) {
      emit("response.reasoning_summary_part.added", { item_id: itemId, output_index: outputIndex, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const piece of splitText(turn.reasoning, turn.chunkSize)) {
        emit("response.reasoning_summary_text.delta", { item_id: itemId, output_index: outputIndex, summary_index: 0, delta: piece });
      }
      emit("response.reasoning_summary_text.done", { item_id: itemId, output_index: outputIndex, summary_index: 0, text: turn.reasoning });
      emit("response.reasoning_summary_part.done", { item_id: itemId, output_index: outputIndex, summary_index: 0, part: { type: "summary_text", text: turn.reasoning } });
      summary.push({ type: "summary_text", text: turn.reasoning });
    }
    const item = { id: itemId, type: "reasoning", summary, encrypted_content: encrypted };
    emit("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
    outputIndex++;
  }

  if (turn.text !== undefined) {
    const itemId = `msg_${id}_${outputIndex}`;
    emit("response.output_item.added", { output_index: outputIndex, item: { id: itemId, type: "message", status: "in_progress", role: "assistant", content: [] } });
    emit("response.content_part.added", { item_id: itemId, output_index: outputIndex, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text: "" } });
    for (const piece of splitText(turn.text, turn.chunkSize)) {
      emit("response.output_text.delta", { item_id: itemId, output_index: outputIndex, content_index: 0, delta: piece, logprobs: [] });
    }
    if (options.final === false && !turn.toolCalls?.length) return frames;
    emit("response.output_text.done", { item_id: itemId, output_index: outputIndex, content_index: 0, text: turn.text, logprobs: [] });
    const part = { type: "output_text", annotations: [], logprobs: [], text: turn.text };
    emit("response.content_part.done", { item_id: itemId, output_index: outputIndex, content_index: 0, part });
    const item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [part] };
    emit("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
    outputIndex++;
  }

  for (const call of turn.toolCalls ?? []) {
    const itemId = `fc_${call.id}`;
    const args = argumentsText(call);
    emit("response.output_item.added", { output_index: outputIndex, item: { id: itemId, type: "function_call", status: "in_progress", arguments: "", call_id: call.id, name: call.name } });
    for (const piece of splitText(args, turn.chunkSize ?? 8)) {
      emit("response.function_call_arguments.delta", { item_id: itemId, output_index: outputIndex, delta: piece });
    }
    emit("response.function_call_arguments.done", { item_id: itemId, output_index: outputIndex, arguments: args });
    const item = { id: itemId, type: "function_call", status: "completed", arguments: args, call_id: call.id, name: call.name };
    emit("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
    outputIndex++;
  }

  if (options.error) {
    emit("error", { error: options.error });
    emit("response.failed", { response: response("failed", { error: { code: options.error.code ?? "server_error", message: options.error.message } }) });
    return frames;
  }
  if (options.final === false) return frames;
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  const usageBody = usage
    ? {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached ?? 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
        total_tokens: usage.input + usage.output,
      }
    : null;
  const finish = finishReasonOf(turn);
  if (finish === "length" || finish === "content_filter") {
    const reason = finish === "length" ? "max_output_tokens" : "content_filter";
    emit("response.incomplete", { response: response("incomplete", { output, usage: usageBody, incomplete_details: { reason } }) });
  } else {
    emit("response.completed", { response: response("completed", { output, usage: usageBody }) });
  }
  return frames;
}

/**
 * A non-streaming Responses body (`stream: false`): the final `response` object of {@link renderResponsesStream} (status, output items, usage).
 * @example
 * renderResponsesJson({ text: "hi" }).status; // "completed"
 */
export function renderResponsesJson(turn: ScriptedTurn): Record<string, unknown> {
  const frames = renderResponsesStream(turn);
  const last = JSON.parse(frames[frames.length - 1].slice("data: ".length)) as { response: Record<string, unknown> };
  return last.response;
}

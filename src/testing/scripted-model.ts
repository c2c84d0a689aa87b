/**
 * `scriptedModel`: an AI SDK `MockLanguageModelV4` answering each `doStream` call with the next scripted step (stream parts, a turn, an `Error`,
 * `"hang"` until aborted, or `{ hangAfter }`); an exhausted script rejects; `model.doStreamCalls` records every call's options.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import type { ScriptedTurn } from "./openai-wire.ts";
import { splitText } from "./openai-wire.ts";

/**
 * One scripted model call.
 * @example
 * const steps: ScriptedStep[] = [{ text: "hi" }, new Error("boom"), "hang"];
 */
export type ScriptedStep = LanguageModelV4StreamPart[] | ScriptedTurn | Error | "hang" | { hangAfter: LanguageModelV4StreamPart[] | ScriptedTurn };

/**
 * The v3 stream parts of a turn: reasoning, text, tool-input start/delta/end + tool-call per
 * call, then `finish` with the usage (`unified` finish reason from `finishReason`).
 * @example
 * streamPartsOf({ text: "hi" }).map((part) => part.type); // [..., "text-delta", "text-end", "finish"]
 */
export function streamPartsOf(turn: ScriptedTurn): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
  parts.push({ type: "response-metadata", id: turn.id ?? "resp_mock", modelId: turn.model ?? "mock-model" });
  if (turn.reasoning !== undefined) {
    parts.push({ type: "reasoning-start", id: "r0" });
    for (const piece of splitText(turn.reasoning, turn.chunkSize)) parts.push({ type: "reasoning-delta", id: "r0", delta: piece });
    parts.push({ type: "reasoning-end", id: "r0" });
  }
  if (turn.text !== undefined) {
    parts.push({ type: "text-start", id: "t0" });
    for (const piece of splitText(turn.text, turn.chunkSize)) parts.push({ type: "text-delta", id: "t0", delta: piece });
    parts.push({ type: "text-end", id: "t0" });
  }
  for (const call of turn.toolCalls ?? []) {
    const input = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    parts.push({ type: "tool-input-start", id: call.id, toolName: call.name });
    for (const piece of splitText(input, turn.chunkSize ?? 8)) parts.push({ type: "tool-input-delta", id: call.id, delta: piece });
    parts.push({ type: "tool-input-end", id: call.id });
    parts.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input });
  }
  const finish = turn.finishReason ?? (turn.toolCalls?.length ? "tool_calls" : "stop");
  const unified = finish === "tool_calls" ? "tool-calls" : finish === "content_filter" ? "content-filter" : finish;
  const usage = turn.usage === undefined ? { input: 10, output: 5 } : turn.usage;
  parts.push({
    type: "finish",
    finishReason: { unified, raw: finish },
    usage: {
      inputTokens: { total: usage?.input, noCache: usage ? usage.input - (usage.cached ?? 0) : undefined, cacheRead: usage?.cached, cacheWrite: undefined },
      outputTokens: { total: usage?.output, text: undefined, reasoning: usage?.reasoning },
    },
  });
  return parts;
}

function abortError(): Error {
  const error = new Error("This operation was aborted");
  error.name = "AbortError";
  return error;
}

/**
 * The model {@link scriptedModel} returns: an AI SDK `LanguageModelV4` that also records the options of every `doStream` call, in call order. Typed
 * against `@ai-sdk/provider` only, so that a consumer's declarations do not pull in the `ai` package's.
 */
export interface ScriptedModel extends LanguageModelV4 {
  readonly doStreamCalls: LanguageModelV4CallOptions[];
}

/**
 * A language model (the AI SDK's `MockLanguageModelV4`) that replays `steps`, one per `doStream` call.
 * @example
 * const model = scriptedModel([{ text: "hi" }, new Error("boom")]);
 */
export function scriptedModel(steps: ScriptedStep[], options: { provider?: string; modelId?: string } = {}): ScriptedModel {
  const queue = [...steps];
  let call = 0;
  return new MockLanguageModelV4({
    provider: options.provider ?? "mock.scripted",
    modelId: options.modelId ?? "mock-model",
    doStream: async ({ abortSignal }) => {
      call++;
      const step = queue.shift();
      if (step === undefined) throw new Error(`scriptedModel: no scripted step left for call #${call}`);
      if (step instanceof Error) throw step;
      if (step === "hang" || (typeof step === "object" && "hangAfter" in step)) {
        const before = step === "hang" ? [] : Array.isArray(step.hangAfter) ? step.hangAfter : streamPartsOf(step.hangAfter);
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              controller.enqueue({ type: "stream-start", warnings: [] });
              for (const part of before) if (part.type !== "finish" && part.type !== "stream-start") controller.enqueue(part);
              const fail = () => controller.error(abortError());
              if (abortSignal?.aborted) fail();
              else abortSignal?.addEventListener("abort", fail, { once: true });
            },
          }),
        };
      }
      const parts = Array.isArray(step) ? step : streamPartsOf(step);
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}

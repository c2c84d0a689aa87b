/**
 * Stable item ids for OpenAI Responses SSE streams whose server rotates them.
 *
 * GitHub Copilot's Responses endpoint gives the same output item a new id on every
 * event (`output_item.added` says `id-3`, its deltas say `id-5`, `id-6`, …).
 * `@ai-sdk/openai` 3.x looks items up by id and crashes on the first rotated one
 * (vercel/ai fixed it in PR #18548, `@ai-sdk/openai` 4.x). This transform rewrites
 * every `item_id` (and `item.id` in `output_item.done`) to the id announced by
 * `response.output_item.added` for the same `output_index`.
 *
 * Contract (ours): a byte-for-byte no-op for streams whose ids are already stable;
 * frames that are not JSON, or lack `output_index`, pass through untouched; SSE framing
 * is preserved (frames may arrive split across chunks). Never throws on bad input.
 *
 * @example
 * ```ts
 * const fixed = new Response(response.body!.pipeThrough(stableResponsesItemIds()), response);
 * ```
 */

import { rewriteDataLines, sseFrameRewriter } from "./sse-frames.ts";

type Event = { type?: unknown; output_index?: unknown; item_id?: unknown; item?: { id?: unknown } };

/**
 * A TransformStream over SSE bytes that pins item ids per output index.
 *
 * @example
 * ```ts
 * const fixed = new Response(response.body!.pipeThrough(stableResponsesItemIds()), response);
 * ```
 */
export function stableResponsesItemIds(): TransformStream<Uint8Array, Uint8Array> {
  const canonical = new Map<number, string>();
  const edit = (payload: unknown): unknown => {
    const event = payload as Event;
    if (typeof event !== "object" || event === null || typeof event.output_index !== "number") return undefined;
    const index = event.output_index;
    if (event.type === "response.output_item.added" && typeof event.item?.id === "string") {
      canonical.set(index, event.item.id);
      return undefined;
    }
    const id = canonical.get(index);
    if (id === undefined) return undefined;
    let touched = false;
    if (typeof event.item_id === "string" && event.item_id !== id) {
      event.item_id = id;
      touched = true;
    }
    if (event.type === "response.output_item.done" && event.item && typeof event.item.id === "string" && event.item.id !== id) {
      event.item.id = id;
      touched = true;
    }
    return touched ? event : undefined;
  };
  return sseFrameRewriter((frame) => (frame.includes('"output_index"') ? rewriteDataLines(frame, edit) : frame));
}

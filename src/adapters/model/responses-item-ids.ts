/**
 * Stable item ids for OpenAI Responses SSE streams whose server rotates them (GitHub Copilot; `@ai-sdk/openai` 3.x crashes on a rotated id): every
 * `item_id` is rewritten to the id `response.output_item.added` announced for the same `output_index`. A byte-for-byte no-op on stable streams;
 * non-JSON frames pass through; never throws.
 */

import { rewriteDataLines, sseFrameRewriter } from "./sse-frames.ts";

type Event = { type?: unknown; output_index?: unknown; item_id?: unknown; item?: { id?: unknown } };

/** A TransformStream over SSE bytes that pins item ids per output index. */
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

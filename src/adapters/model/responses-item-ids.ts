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
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const canonical = new Map<number, string>();
  let buffer = "";

  const rewrite = (frame: string): string => {
    if (!frame.includes('"output_index"')) return frame;
    const lines = frame.split("\n");
    let changed = false;
    const out = lines.map((line) => {
      if (!line.startsWith("data:")) return line;
      const data = line.slice(5).trimStart();
      let event: Event;
      try {
        event = JSON.parse(data) as Event;
      } catch {
        return line;
      }
      if (typeof event !== "object" || event === null || typeof event.output_index !== "number") return line;
      const index = event.output_index;
      if (event.type === "response.output_item.added" && typeof event.item?.id === "string") {
        canonical.set(index, event.item.id);
        return line;
      }
      const id = canonical.get(index);
      if (id === undefined) return line;
      let touched = false;
      if (typeof event.item_id === "string" && event.item_id !== id) {
        event.item_id = id;
        touched = true;
      }
      if (event.type === "response.output_item.done" && event.item && typeof event.item.id === "string" && event.item.id !== id) {
        event.item.id = id;
        touched = true;
      }
      if (!touched) return line;
      changed = true;
      return `data: ${JSON.stringify(event)}`;
    });
    return changed ? out.join("\n") : frame;
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      buffer += decoder.decode(chunk, { stream: true });
      let boundary = buffer.search(/\r?\n\r?\n/);
      while (boundary !== -1) {
        const separator = buffer.slice(boundary).match(/^\r?\n\r?\n/)![0];
        const frame = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + separator.length);
        controller.enqueue(encoder.encode(rewrite(frame) + separator));
        boundary = buffer.search(/\r?\n\r?\n/);
      }
    },
    flush(controller) {
      buffer += decoder.decode();
      if (buffer.length > 0) controller.enqueue(encoder.encode(rewrite(buffer)));
    },
  });
}

/**
 * A TransformStream over SSE bytes that hands each complete frame (split across chunks or not) to `rewrite` once, in order, keeping separators as
 * they came; a rewrite that returns its input leaves the bytes unchanged. Used by the stream normalisers in front of the AI SDK's parsers.
 */
export function sseFrameRewriter(rewrite: (frame: string) => string): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = "";
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

/** Rewrites the JSON payload of each `data:` line of one SSE frame; `edit` returns the new payload, or undefined to keep the line. */
export function rewriteDataLines(frame: string, edit: (payload: unknown) => unknown): string {
  let changed = false;
  const lines = frame.split("\n").map((line) => {
    if (!line.startsWith("data:")) return line;
    let payload: unknown;
    try {
      payload = JSON.parse(line.slice(5).trimStart());
    } catch {
      return line;
    }
    const next = edit(payload);
    if (next === undefined) return line;
    changed = true;
    return `data: ${JSON.stringify(next)}`;
  });
  return changed ? lines.join("\n") : frame;
}

/**
 * Server-sent event bodies: the AI SDK UI message stream (`data: <JSON>` frames, `[DONE]` at the end, a source error as an `error` chunk, the exact
 * `UI_MESSAGE_STREAM_HEADERS`) and the raw-log stream (`id: <version>` so `EventSource` resumes). Keep-alive comments every `keepAliveMs` while idle;
 * a cancelled body unsubscribes and never stops the run.
 */
import type { UIMessageChunk } from "ai";
import type { Observable, Subscription } from "rxjs";
import type { StoredEvent } from "../store/event-log.ts";

/**
 * The UI message stream response headers (`ai` 7 `UI_MESSAGE_STREAM_HEADERS`).
 * @example
 * return new Response(stream, { headers: UI_MESSAGE_STREAM_HEADERS });
 */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
});

const encoder = new TextEncoder();

function sseBody<T>(source: Observable<T>, frame: (value: T) => string, options: { done?: string; onError: (error: unknown) => string; keepAliveMs?: number }): ReadableStream<Uint8Array> {
  let subscription: Subscription | undefined;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    subscription?.unsubscribe();
    if (keepAlive !== undefined) clearInterval(keepAlive);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      const write = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      const close = () => {
        if (closed) return;
        closed = true;
        stop();
        controller.close();
      };
      keepAlive = setInterval(() => write(": keep-alive\n\n"), options.keepAliveMs ?? 15_000);
      keepAlive.unref?.();
      subscription = source.subscribe({
        next: (value) => write(frame(value)),
        error: (error: unknown) => {
          write(options.onError(error));
          if (options.done !== undefined) write(options.done);
          close();
        },
        complete: () => {
          if (options.done !== undefined) write(options.done);
          close();
        },
      });
    },
    cancel() {
      stop();
    },
  });
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A `200` UI message stream response of `chunks` (see the module contract). */
export function uiMessageStreamResponse(chunks: Observable<UIMessageChunk>, options: { keepAliveMs?: number; headers?: Record<string, string> } = {}): Response {
  const body = sseBody(chunks, (chunk) => `data: ${JSON.stringify(chunk)}\n\n`, {
    done: "data: [DONE]\n\n",
    onError: (error) => `data: ${JSON.stringify({ type: "error", errorText: describe(error) })}\n\n`,
    keepAliveMs: options.keepAliveMs,
  });
  return new Response(body, { status: 200, headers: { ...options.headers, ...UI_MESSAGE_STREAM_HEADERS } });
}

/** A `200` event stream of stored events, `id:` being each event's stream version. */
export function logEventStreamResponse(events: Observable<StoredEvent>, options: { keepAliveMs?: number } = {}): Response {
  return jsonEventStreamResponse(events, (event) => event.version, options);
}

/** A `200` event stream of JSON values, `id:` being `idOf(value)`. */
export function jsonEventStreamResponse<T>(values: Observable<T>, idOf: (value: T) => number | string, options: { keepAliveMs?: number } = {}): Response {
  const body = sseBody(values, (value) => `id: ${idOf(value)}\ndata: ${JSON.stringify(value)}\n\n`, {
    onError: (error) => `event: error\ndata: ${JSON.stringify({ message: describe(error) })}\n\n`,
    keepAliveMs: options.keepAliveMs,
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" } });
}

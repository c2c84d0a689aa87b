/**
 * The start of a run that a request asked for, decided before any response header is sent.
 *
 * Contract (ours):
 * - `awaitRunStart(chunks, outcome)` subscribes to the run's chunks at once (buffering them) and
 *   waits for the first of: the first chunk (the run started: `started`, whose `stream` replays
 *   the buffered chunks, then the live ones), the outcome settling fulfilled (`started` too: its
 *   chunks are in the log), or the outcome rejecting before any chunk (`refused`, the chunk
 *   subscription is closed). The caller answers `409` for a `SessionBusyError` (another replica or
 *   process holds the session) without ever sending `200`;
 * - after the start, an outcome that rejects before the first chunk was seen cannot happen; a
 *   rejection after it is ignored (the run's own events end the stream);
 * - unsubscribing from `stream` (the client went away) closes the chunk subscription; it never
 *   stops the run.
 *
 * @example
 * ```ts
 * const start = await awaitRunStart(runChunks$(log, streamId, before), session.prompt("hi"));
 * if (start.kind === "refused") return busyOrError(start.error);
 * return uiMessageStreamResponse(start.stream);
 * ```
 */
import { Observable, ReplaySubject } from "rxjs";

/** How a requested run began. */
export type RunStart<T> = { kind: "started"; stream: Observable<T> } | { kind: "refused"; error: unknown };

/**
 * Waits for the run to start or be refused (see the module contract).
 *
 * @example
 * ```ts
 * const start = await awaitRunStart(chunks$, outcome);
 * ```
 */
export function awaitRunStart<T>(chunks: Observable<T>, outcome: Promise<unknown>): Promise<RunStart<T>> {
  const buffer = new ReplaySubject<T>();
  let first = false;
  return new Promise<RunStart<T>>((resolve) => {
    let settled = false;
    const started = () => {
      if (settled) return;
      settled = true;
      resolve({
        kind: "started",
        stream: new Observable<T>((subscriber) => {
          const inner = buffer.subscribe(subscriber);
          return () => {
            inner.unsubscribe();
            connection.unsubscribe();
          };
        }),
      });
    };
    const connection = chunks.subscribe({
      next: (chunk) => {
        first = true;
        buffer.next(chunk);
        started();
      },
      error: (error: unknown) => {
        buffer.error(error);
        started();
      },
      complete: () => {
        buffer.complete();
        started();
      },
    });
    outcome.then(started, (error: unknown) => {
      if (settled || first) return;
      settled = true;
      connection.unsubscribe();
      resolve({ kind: "refused", error });
    });
  });
}

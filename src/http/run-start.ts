/**
 * The start of a requested run, decided before any response header: `awaitRunStart` buffers the run's chunks and waits for the first chunk or a
 * fulfilled outcome (`started`) or a rejection before any chunk (`refused`, e.g. `SessionBusyError` → `409`, never after a `200`). An outcome
 * that fulfils before any chunk is checked with `neverStarted`: a run that ended without ever being in the log (its first write was refused)
 * is `refused` with that error, since no chunk of it will ever come. Unsubscribing from the stream never stops the run.
 */
import { observable, replaySubject, type Observable } from "../core/rx.ts";

/** How a requested run began. */
export type RunStart<T> = { kind: "started"; stream: Observable<T> } | { kind: "refused"; error: unknown };

/** Waits for the run to start or be refused (see the module contract). */
export function awaitRunStart<T>(chunks: Observable<T>, outcome: Promise<unknown>, neverStarted?: (outcome: unknown) => Promise<Error | undefined>): Promise<RunStart<T>> {
  const buffer = replaySubject<T>();
  let first = false;
  return new Promise<RunStart<T>>((resolve) => {
    let settled = false;
    const started = () => {
      if (settled) return;
      settled = true;
      resolve({
        kind: "started",
        stream: observable<T>((subscriber) => {
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
    const refuse = (error: unknown) => {
      if (settled || first) return;
      settled = true;
      connection.unsubscribe();
      resolve({ kind: "refused", error });
    };
    outcome.then(async (value) => {
      if (settled || first || !neverStarted) return started();
      const error = await neverStarted(value).catch((failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))));
      if (error) refuse(error);
      else started();
    }, refuse);
  });
}

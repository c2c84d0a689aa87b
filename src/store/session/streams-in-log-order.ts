/**
 * Several streams of one log merged in log order (ours): their events after a version each, catch-up then live, by ascending global position, each
 * event once. What a session's audit source (`session-audit.ts`) and the HTTP events route (a session's stream and its tombstone's) read.
 *
 * Two subscriptions could each deliver in order but not in order with each other, so the events are read instead: each pass reads the log's head
 * position, then every stream after what was delivered (a page each), and delivers the events at or below the head and below the end of any full
 * page, merged by global position. Every event at or below a head read first is visible to the reads after it (positions grow in commit order), so
 * no later pass finds an earlier event. One subscription per stream from the first head only wakes the passes (one at a time; a wake during a pass
 * runs one more). Closing the log completes it (also when a pass meets it closed), another read failure errors it.
 */
import type { Subscription } from "rxjs";
import { LogClosedError } from "../../core/errors.ts";
import { observable, type Observable } from "../../core/rx.ts";
import type { EventLog, StoredEvent } from "../event-log.ts";

/** Events read per stream and pass. */
const PAGE_SIZE = 512;

/**
 * The events of `from`'s streams after each one's `afterVersion`, catch-up then live, in log order (see the module contract). Completes when the log
 * closes; errors with a read's failure.
 */
export function streamsInLogOrder(log: EventLog, from: readonly { streamId: string; afterVersion: number }[]): Observable<StoredEvent> {
  const streams = from.map((start) => start.streamId);
  return observable<StoredEvent>((subscriber) => {
    const delivered = new Map(from.map((start) => [start.streamId, start.afterVersion]));
    const wakes: Subscription[] = [];
    let closed = false;
    let running = false;
    let again = false;
    const end = (error?: unknown) => {
      if (closed) return;
      closed = true;
      for (const wake of wakes) wake.unsubscribe();
      if (error === undefined) subscriber.complete();
      else subscriber.error(error);
    };

    // A wake during a pass sets `again`: the running pass goes round once more.
    const pass = async (): Promise<void> => {
      again = true;
      if (running) return;
      running = true;
      try {
        while (again && !closed) {
          again = false;
          let upTo = await log.headPosition();
          const pages = await Promise.all(streams.map((streamId) => log.readStream(streamId, { fromVersion: delivered.get(streamId)! + 1, limit: PAGE_SIZE })));
          for (const page of pages) {
            if (page.length < PAGE_SIZE) continue;
            // A full page: the stream may go on past it, so nothing after its last event is delivered in this pass.
            upTo = Math.min(upTo, page[page.length - 1].globalPosition);
            again = true;
          }
          const ready = pages
            .flat()
            .filter((event) => event.globalPosition <= upTo)
            .sort((a, b) => a.globalPosition - b.globalPosition);
          for (const event of ready) {
            if (closed) return;
            delivered.set(event.streamId, event.version);
            subscriber.next(event);
          }
        }
      } catch (error) {
        // A pass that meets the log closing ends the stream as closing the log does.
        end(LogClosedError.isInstance(error) ? undefined : error);
      } finally {
        running = false;
      }
    };

    log
      .headPosition()
      .then((head) => {
        if (closed) return;
        // Every event after `head` wakes a pass; the first pass covers the rest. Closing the log completes both: the merged stream ends with them.
        let completed = 0;
        for (const streamId of streams) {
          wakes.push(
            log.subscribe({ streamId, fromPosition: head }).subscribe({
              next: () => void pass(),
              error: (error: unknown) => end(error),
              complete: () => {
                completed += 1;
                if (completed === streams.length) end();
              },
            }),
          );
          if (closed) return;
        }
        return pass();
      })
      .catch((error: unknown) => end(error));
    return () => {
      closed = true;
      for (const wake of wakes) wake.unsubscribe();
    };
  });
}

/**
 * Reads a CLI test's SQLite log from the test process while CLI children write it: every event, polled until one matches (the file may be
 * mid-write between polls).
 */
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

/** An event as a test reads it. */
export interface LoggedEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The events of the log at `db` (polled every 50 ms, up to 30 s, until `until` holds for one of them, when given). */
export async function loggedEvents(db: string, until?: (event: LoggedEvent) => boolean): Promise<LoggedEvent[]> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const log = createSqliteEventLog({ path: db });
    try {
      const events = (await log.readAll()) as unknown as LoggedEvent[];
      if (!until || events.some(until)) return events;
    } catch {
      // The file may be mid-write; try again.
    } finally {
      await log.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the expected event never appeared in the log");
}

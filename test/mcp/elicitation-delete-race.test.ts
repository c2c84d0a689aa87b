/**
 * An elicitation answered while its session is being deleted: the answer's append is made at the version it was checked against, so it fails
 * instead of recreating the deleted `elicitation-<id>` stream (whose content the delete removed), and the caller gets `ElicitationNotFoundError`.
 * The race is made deterministic by a log whose answer append first lets the delete run (a real SQLite file).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ElicitationNotFoundError, answerElicitation } from "../../src/harness/elicitations.ts";
import type { EventLog } from "../../src/store/event-log.ts";
import { elicitationStreamId } from "../../src/store/events/elicitation-events.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";

describe("an elicitation answered as its session is deleted", () => {
  it("does not recreate the deleted elicitation stream, and the answer is refused as not found", async () => {
    const log = createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-elicit-race-")), "race.db") });
    const repo = createSessionRepository({ log });
    const session = await repo.create({ cwd: "/tmp" });
    const stream = elicitationStreamId(session.id);
    await log.append(stream, [
      {
        type: "elicitation.requested",
        data: { elicitationId: "el_1", sessionId: session.id, server: "people", message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } }, requestDigest: "d1" },
        metadata: { sessionId: session.id },
      },
    ]);
    // The delete runs between the answer's read of the stream and its append.
    let deleted = false;
    const racing: EventLog = new Proxy(log, {
      get(target, property, receiver) {
        if (property !== "append") return Reflect.get(target, property, receiver);
        return async (...args: Parameters<EventLog["append"]>) => {
          if (args[0] === stream && !deleted) {
            deleted = true;
            await repo.delete(session.id);
          }
          return target.append(...args);
        };
      },
    });
    await expect(answerElicitation(racing, session.id, "el_1", { action: "accept", content: { name: "ANSWER-AFTER-DELETE" } }, "api")).rejects.toSatisfy((error: unknown) =>
      ElicitationNotFoundError.isInstance(error),
    );
    expect(deleted).toBe(true);
    expect(await log.readStream(stream)).toEqual([]);
    await log.close();
  });
});

/**
 * An elicitation answered while its session is being deleted: the answer's append is made at the version it was checked against, so it fails
 * instead of recreating the deleted `elicitation-<id>` stream (whose content the delete removed), and the caller gets `ElicitationNotFoundError`.
 * A request (the waiter's) made after the session's delete, or racing it (a first request, or one after an earlier request), is refused as
 * `SessionNotFoundError` and leaves no elicitation stream. The races are made deterministic by a log whose append to the elicitation stream first
 * lets the library's delete run (a real SQLite file).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionNotFoundError } from "../../src/core/errors.ts";
import { ElicitationNotFoundError, answerElicitation, createElicitationWaiter } from "../../src/harness/elicitations.ts";
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

/** A log whose next append to `stream` first runs `before` (once). */
function racingLog(log: EventLog, stream: string, before: () => Promise<void>): { log: EventLog; ran: () => boolean } {
  let ran = false;
  const racing: EventLog = new Proxy(log, {
    get(target, property, receiver) {
      if (property !== "append") return Reflect.get(target, property, receiver);
      return async (...args: Parameters<EventLog["append"]>) => {
        if (args[0] === stream && !ran) {
          ran = true;
          await before();
        }
        return target.append(...args);
      };
    },
  });
  return { log: racing, ran: () => ran };
}

describe("an elicitation requested as its session is deleted", () => {
  // A request that gets recorded is abandoned at once (its wait ends), so a wrongly recorded one fails the test without waiting for an answer.
  const ended = new AbortController();
  const request = (toolCallId: string) => ({
    server: "people",
    toolCallId,
    message: "REQUEST-AFTER-DELETE: your name?",
    requestedSchema: { type: "object", properties: { name: { type: "string" } } },
    signal: ended.signal,
  });
  const onRequested = () => ended.abort();
  const open = async () => {
    const log = createSqliteEventLog({ path: join(mkdtempSync(join(tmpdir(), "arbor-elicit-request-race-")), "race.db") });
    const repo = createSessionRepository({ log });
    const session = await repo.create({ cwd: "/tmp" });
    return { log, repo, id: session.id, stream: elicitationStreamId(session.id) };
  };
  const isGone = (error: unknown) => SessionNotFoundError.isInstance(error);

  it("after the delete: the request is refused as SessionNotFoundError and no elicitation stream is created", async () => {
    const { log, repo, id, stream } = await open();
    await repo.delete(id);
    const waiter = createElicitationWaiter({ log, locate: () => ({ sessionId: id }), onRequested });
    await expect(waiter(request("call_1"))).rejects.toSatisfy(isGone);
    expect(await log.readStream(stream)).toEqual([]);
    await log.close();
  });

  it("a first request racing the delete (between its check and its append) leaves no elicitation stream", async () => {
    const { log, repo, id, stream } = await open();
    const racing = racingLog(log, stream, () => repo.delete(id));
    const waiter = createElicitationWaiter({ log: racing.log, locate: () => ({ sessionId: id }), onRequested });
    await expect(waiter(request("call_1"))).rejects.toSatisfy(isGone);
    expect(racing.ran()).toBe(true);
    expect(await log.readStream(stream)).toEqual([]);
    expect(await log.streamVersion(stream)).toBe(0);
    await log.close();
  });

  it("a later request racing the delete does not recreate the deleted stream", async () => {
    const { log, repo, id, stream } = await open();
    await log.append(stream, [
      {
        type: "elicitation.requested",
        data: { elicitationId: "el_0", sessionId: id, server: "people", message: "Earlier?", requestedSchema: { type: "object", properties: {} }, requestDigest: "d0" },
        metadata: { sessionId: id },
      },
    ]);
    const racing = racingLog(log, stream, () => repo.delete(id));
    const waiter = createElicitationWaiter({ log: racing.log, locate: () => ({ sessionId: id }), onRequested });
    await expect(waiter(request("call_2"))).rejects.toSatisfy(isGone);
    expect(racing.ran()).toBe(true);
    expect(await log.readStream(stream)).toEqual([]);
    await log.close();
  });
});

/**
 * Durable elicitation: an MCP server's request for input becomes a wait in the log that any process can answer and that outlives the asker
 * (`docs/approval.md` durability). The waiter reuses an earlier request of the same call and question (so a continued run gets the recorded
 * answer); {@link answerElicitation} validates and appends once (same answer: no-op, another: `ElicitationConflictError`); an abandoned wait is
 * closed as `cancel`. Neither a request nor an answer recreates the elicitation stream of a deleted session (`SessionNotFoundError`,
 * `ElicitationNotFoundError`).
 */
import { randomUUID } from "node:crypto";
import type { McpElicitationAnswer, McpElicitationHandler, McpElicitationRequest } from "../adapters/mcp/elicitation.ts";
import { defineJsonSchemaTool } from "../adapters/tools/tool-schema.ts";
import { ArborError, EventIdReusedError, ExpectedVersionConflictError, SessionNotFoundError, type ArborErrorOptions } from "../core/errors.ts";
import { inputDigest } from "../machines/approval-fold.ts";
import type { EventLog, NewEvent, StoredEvent } from "../store/event-log.ts";
import { isArborEvent, type ArborEventData } from "../store/events/catalogue.ts";
import { elicitationStreamId } from "../store/events/elicitation-events.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { ignored } from "../core/ignored.ts";

/** One elicitation of a session, as the log tells it. */
export interface ElicitationRecord extends ArborEventData<"elicitation.requested"> {
  /** When it was asked (ISO 8601). */
  requestedAt: string;
  status: "pending" | "answered";
  answer?: ElicitationAnswer & { via: ArborEventData<"elicitation.answered">["via"]; answeredAt: string };
}

/** An answer: MCP's `accept` (with values), `decline` or `cancel`. */
export type ElicitationAnswer = McpElicitationAnswer;

/** Where an answer came from (logged as `via`). */
export type ElicitationVia = ArborEventData<"elicitation.answered">["via"];

/**
 * No elicitation with that id in the session (code `ELICITATION_NOT_FOUND`). Nothing was written.
 * @example
 * if (ElicitationNotFoundError.isInstance(error)) console.error(error.message); // names the waiting ones
 */
export class ElicitationNotFoundError extends ArborError {
  static readonly code = "ELICITATION_NOT_FOUND";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(ElicitationNotFoundError.code, message, options);
  }
  static override isInstance(error: unknown): error is ElicitationNotFoundError {
    return ArborError.isInstance(error) && error.code === ElicitationNotFoundError.code;
  }
}

/**
 * The elicitation already has another answer (code `ELICITATION_CONFLICT`). Nothing was written.
 * @example
 * if (ElicitationConflictError.isInstance(error)) console.error(error.details.answer);
 */
export class ElicitationConflictError extends ArborError {
  static readonly code = "ELICITATION_CONFLICT";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(ElicitationConflictError.code, message, options);
  }
  static override isInstance(error: unknown): error is ElicitationConflictError {
    return ArborError.isInstance(error) && error.code === ElicitationConflictError.code;
  }
}

/**
 * An `accept` whose content does not match the request's schema (code `ELICITATION_ANSWER_INVALID`); the message names the field.
 * @example
 * if (ElicitationAnswerInvalidError.isInstance(error)) console.error(error.message); // "…: name: must be string"
 */
export class ElicitationAnswerInvalidError extends ArborError {
  static readonly code = "ELICITATION_ANSWER_INVALID";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(ElicitationAnswerInvalidError.code, message, options);
  }
  static override isInstance(error: unknown): error is ElicitationAnswerInvalidError {
    return ArborError.isInstance(error) && error.code === ElicitationAnswerInvalidError.code;
  }
}

/** Folds a session's elicitation stream (pure): every request with its answer, in request order. */
export function foldElicitations(events: readonly StoredEvent[]): ElicitationRecord[] {
  const records = new Map<string, ElicitationRecord>();
  for (const event of events) {
    if (!isArborEvent(event)) continue;
    if (event.type === "elicitation.requested") records.set(event.data.elicitationId, { ...event.data, requestedAt: event.time, status: "pending" });
    else if (event.type === "elicitation.answered") {
      const record = records.get(event.data.elicitationId);
      if (!record || record.answer) continue;
      const { action, content, via } = event.data;
      const answer = action === "accept" ? { action, content: content ?? {} } : { action };
      records.set(record.elicitationId, { ...record, status: "answered", answer: { ...answer, via, answeredAt: event.time } });
    }
  }
  return [...records.values()];
}

/**
 * The elicitations of a session (see {@link foldElicitations}).
 * @example
 * const pending = (await listElicitations(log, "chat-1")).filter((item) => item.status === "pending");
 */
export async function listElicitations(log: EventLog, sessionId: string): Promise<ElicitationRecord[]> {
  return foldElicitations(await log.readStream(elicitationStreamId(sessionId)));
}

const sameAnswer = (a: ElicitationAnswer, b: ElicitationAnswer) => JSON.stringify(a) === JSON.stringify(b);
const answerOf = (record: ElicitationRecord): ElicitationAnswer => {
  const { answer } = record;
  return answer!.action === "accept" ? { action: "accept", content: answer!.content } : { action: answer!.action };
};

/**
 * Records an answer (see the module contract), appended at the version of the elicitation stream it was checked against: an answer that races
 * the session's delete does not recreate the deleted stream.
 * @throws ElicitationNotFoundError (also when the session was deleted meanwhile), ElicitationAnswerInvalidError, ElicitationConflictError; the log's errors.
 * @example
 * const { changed } = await answerElicitation(log, "chat-1", "el_1", { action: "decline" }, "cli");
 */
export async function answerElicitation(
  log: EventLog,
  sessionId: string,
  elicitationId: string,
  answer: ElicitationAnswer,
  via: ElicitationVia,
): Promise<{ changed: boolean; record: ElicitationRecord }> {
  // The answer is appended at the version it was checked against: an answer racing the session's delete fails its append instead of recreating the
  // deleted elicitation stream (then the elicitation is not found), and one racing another answer or request reads the stream again.
  for (let attempt = 1; ; attempt++) {
    const events = await log.readStream(elicitationStreamId(sessionId));
    const outcome = await answerAt(log, sessionId, elicitationId, answer, via, foldElicitations(events), events.at(-1)?.version ?? 0);
    if (outcome !== "moved") return outcome;
    if (attempt >= 8) throw new ElicitationConflictError(`Elicitation "${elicitationId}": its stream kept changing while the answer was written; try again.`, { details: { sessionId, elicitationId } });
  }
}

async function answerAt(
  log: EventLog,
  sessionId: string,
  elicitationId: string,
  answer: ElicitationAnswer,
  via: ElicitationVia,
  records: ElicitationRecord[],
  version: number,
): Promise<{ changed: boolean; record: ElicitationRecord } | "moved"> {
  const record = records.find((item) => item.elicitationId === elicitationId);
  if (!record) {
    const pending = records.filter((item) => item.status === "pending").map((item) => item.elicitationId);
    throw new ElicitationNotFoundError(
      `No elicitation "${elicitationId}" in session ${sessionId}${pending.length ? `; waiting: ${pending.join(", ")}` : "; none waits for an answer"}.`,
      { details: { sessionId, elicitationId } },
    );
  }
  if (answer.action === "accept") {
    const validation = defineJsonSchemaTool({ name: `elicitation ${elicitationId}`, description: record.message, parameters: record.requestedSchema, execute: async () => ({ content: [] }) }).validate(answer.content);
    if (!validation.ok) {
      throw new ElicitationAnswerInvalidError(validation.message.replace(/^Invalid arguments for tool "[^"]*"/, `Invalid answer to elicitation "${elicitationId}"`), { details: { sessionId, elicitationId } });
    }
  }
  if (record.answer) {
    if (sameAnswer(answerOf(record), answer)) return { changed: false, record };
    throw new ElicitationConflictError(`Elicitation "${elicitationId}" was already answered (${record.answer.action}, via ${record.answer.via}); an elicitation is answered once.`, {
      details: { sessionId, elicitationId, answer: record.answer },
    });
  }
  const data = { elicitationId, sessionId, action: answer.action, ...(answer.action === "accept" ? { content: answer.content } : {}), via };
  try {
    await log.append(elicitationStreamId(sessionId), [{ eventId: `${elicitationId}:answered`, type: "elicitation.answered", data, metadata: { sessionId } }], { expectedVersion: version });
  } catch (error) {
    // Another answer (this one, or a different one), a new request, or the session's delete came first: read the stream again.
    if (ExpectedVersionConflictError.isInstance(error) || EventIdReusedError.isInstance(error)) return "moved";
    throw error;
  }
  const answered = (await listElicitations(log, sessionId)).find((item) => item.elicitationId === elicitationId);
  // Deleted right after the answer: what was recorded is gone with it.
  if (!answered) throw new ElicitationNotFoundError(`No elicitation "${elicitationId}" in session ${sessionId}: the session was deleted.`, { details: { sessionId, elicitationId } });
  return { changed: true, record: answered };
}

/**
 * Appends a request to the session's elicitation stream while the session exists, at the version read before the session was checked: a request
 * racing the session's delete never recreates the deleted stream. A delete between the check and the append removes the stream read at version
 * > 0 (the append then conflicts, and the next check refuses); a first request's stream did not exist yet, so the session is checked again after
 * the append, and the stream it created is removed when the session is gone.
 * @throws SessionNotFoundError when the session does not exist (deleted); the log's errors.
 */
async function appendRequest(log: EventLog, sessionId: string, event: NewEvent): Promise<StoredEvent> {
  const stream = elicitationStreamId(sessionId);
  const gone = () =>
    new SessionNotFoundError(`Session "${sessionId}" does not exist (it was deleted): an MCP server's request for input in it is not recorded.`, { details: { sessionId } });
  for (let attempt = 1; ; attempt++) {
    const version = await log.streamVersion(stream);
    if ((await log.streamVersion(sessionStreamId(sessionId))) === 0) throw gone();
    let stored: StoredEvent;
    try {
      [stored] = (await log.append(stream, [event], { expectedVersion: version === 0 ? "no_stream" : version })).events;
    } catch (error) {
      // Another request, an answer, or the session's delete came first: check again.
      if (ExpectedVersionConflictError.isInstance(error) && attempt < 8) continue;
      throw error;
    }
    if (version === 0 && (await log.streamVersion(sessionStreamId(sessionId))) === 0) {
      await log.deleteStream(stream);
      throw gone();
    }
    return stored;
  }
}

/** Options of {@link createElicitationWaiter}. */
export interface ElicitationWaiterOptions {
  log: EventLog;
  /** The session (and run) of a tool call; `undefined` when the call is not known here. */
  locate: (toolCallId: string | undefined) => { sessionId: string; runId?: string } | undefined;
  /** Called once a request is logged (a CLI prints how to answer it). Must not throw. */
  onRequested?: (record: ElicitationRecord) => void;
  /** Answers in this process (a terminal prompt), racing with answers from the log; `undefined` leaves it to others. */
  ask?: (record: ElicitationRecord, signal: AbortSignal) => Promise<ElicitationAnswer | undefined>;
}

/** The MCP adapter's `onElicitation` for a harness (see the module contract). */
export function createElicitationWaiter(options: ElicitationWaiterOptions): McpElicitationHandler {
  const { log } = options;
  const given = new Set<string>();
  const deliver = (record: ElicitationRecord): ElicitationAnswer => {
    given.add(record.elicitationId);
    return answerOf(record);
  };

  const waitFor = async (sessionId: string, record: ElicitationRecord, request: McpElicitationRequest): Promise<ElicitationAnswer> => {
    const local = new AbortController();
    try {
      return await new Promise<ElicitationAnswer>((resolve, reject) => {
        let settled = false;
        const finish = (outcome: () => void) => {
          if (settled) return;
          settled = true;
          subscription?.unsubscribe();
          request.signal.removeEventListener("abort", onAbort);
          outcome();
        };
        // Nobody answered before the server cancelled or the call ended: the wait is closed in the
        // log as a cancel (an answer that won meanwhile stands).
        const onAbort = () => {
          if (settled) return;
          answerElicitation(log, sessionId, record.elicitationId, { action: "cancel" }, "ended")
            .catch((error: unknown) => {
              if (!ElicitationConflictError.isInstance(error)) throw error;
            })
            .then(
              () => finish(() => resolve({ action: "cancel" })),
              (error: unknown) => finish(() => reject(error)),
            );
        };
        const check = async () => {
          const now = (await listElicitations(log, sessionId)).find((item) => item.elicitationId === record.elicitationId);
          if (now?.answer) finish(() => resolve(deliver(now)));
        };
        let subscription: { unsubscribe(): void } | undefined;
        void log.headPosition().then((head) => {
          if (settled) return;
          subscription = log.subscribe({ fromPosition: head, types: ["elicitation.answered"] }).subscribe({
            next: (event) => {
              if (isArborEvent(event) && event.type === "elicitation.answered" && event.data.elicitationId === record.elicitationId) check().catch((error: unknown) => finish(() => reject(error)));
            },
            error: (error: unknown) => finish(() => reject(error)),
          });
          // An answer written before the subscription started.
          return check();
        }).catch((error: unknown) => finish(() => reject(error)));
        request.signal.addEventListener("abort", onAbort, { once: true });
        if (request.signal.aborted) onAbort();
        options
          .ask?.(record, local.signal)
          .then((answer) => (answer && !settled ? answerElicitation(log, sessionId, record.elicitationId, answer, "terminal").then(() => check()) : undefined))
          .catch((error: unknown) => {
            // A conflict means another process answered first: its answer arrives through the log.
            if (!ElicitationConflictError.isInstance(error)) finish(() => reject(error));
          });
      });
    } finally {
      local.abort();
    }
  };

  return async (request) => {
    const where = options.locate(request.toolCallId);
    if (!where) throw new Error(`MCP server "${request.server}" asked for input outside any run this process knows; it cannot be answered.`);
    const requestDigest = inputDigest({ server: request.server, message: request.message, requestedSchema: request.requestedSchema });
    if (request.toolCallId !== undefined) {
      const earlier = (await listElicitations(log, where.sessionId)).find(
        (item) => item.toolCallId === request.toolCallId && item.requestDigest === requestDigest && !given.has(item.elicitationId),
      );
      if (earlier?.answer) return deliver(earlier);
      if (earlier) return waitFor(where.sessionId, earlier, request);
    }
    const data: ArborEventData<"elicitation.requested"> = {
      elicitationId: `el_${randomUUID()}`,
      sessionId: where.sessionId,
      ...(where.runId !== undefined ? { runId: where.runId } : {}),
      ...(request.toolCallId !== undefined ? { toolCallId: request.toolCallId } : {}),
      server: request.server,
      ...(request.tool !== undefined ? { toolName: request.tool } : {}),
      message: request.message,
      requestedSchema: request.requestedSchema,
      requestDigest,
    };
    const stored = await appendRequest(log, where.sessionId, { type: "elicitation.requested", data, metadata: { sessionId: where.sessionId, ...(where.runId ? { runId: where.runId } : {}) } });
    const record: ElicitationRecord = { ...data, requestedAt: stored.time, status: "pending" };
    try {
      options.onRequested?.(record);
    } catch (error) {
      ignored("an onRequested listener threw; it must not lose the wait", error);
    }
    return waitFor(where.sessionId, record, request);
  };
}

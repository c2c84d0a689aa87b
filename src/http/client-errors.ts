/**
 * What the HTTP service tells a client about an error: never which process, host or connection runs a session (`SessionBusyError` becomes a bare
 * `409 SESSION_BUSY`; code-less errors `500 INTERNAL`); other Arbor errors keep code and message. What is hidden goes once to the {@link ServerLog}.
 */
import { ArborError, SessionBusyError } from "../core/errors.ts";

/** One entry of the service's own log (never sent to a client). */
export interface ServerLogEntry {
  level: "warn" | "error";
  code: string;
  message: string;
  /** The session concerned, when there is one. */
  sessionId?: string;
  details?: Record<string, unknown>;
}

/** Where the service logs what it does not tell clients. */
export type ServerLog = (entry: ServerLogEntry) => void;

/**
 * The default {@link ServerLog}: one line `arbor http <level> <code> [session]: message details` on stderr.
 * @example
 * stderrServerLog({ level: "warn", code: "SESSION_BUSY", message: "owned by pid 42" });
 */
export const stderrServerLog: ServerLog = (entry) => {
  const session = entry.sessionId === undefined ? "" : ` [session ${entry.sessionId}]`;
  const details = entry.details && Object.keys(entry.details).length ? ` ${safeJson(entry.details)}` : "";
  process.stderr.write(`arbor http ${entry.level} ${entry.code}${session}: ${entry.message}${details}\n`);
};

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** An error as a client may see it. */
export interface ClientError {
  status: number;
  code: string;
  message: string;
}

/** The message a client gets for a session busy elsewhere (no owner detail). */
export function busyMessage(sessionId: string | undefined): string {
  const which = sessionId === undefined ? "The session" : `Session "${sessionId}"`;
  const stop = `/api/chat/${sessionId === undefined ? ":id" : encodeURIComponent(sessionId)}/stop`;
  return `${which} has a run in progress; retry once it has ended, or stop it (POST ${stop} on any replica; /api is the default base path).`;
}

/** What a client sees of `error` (see the module contract); hidden detail goes to `log`. */
export function clientError(error: unknown, context: { sessionId?: string; log: ServerLog; status?: number }): ClientError {
  const sessionId = context.sessionId;
  if (SessionBusyError.isInstance(error)) {
    context.log({ level: "warn", code: error.code, message: error.message, ...(sessionId !== undefined ? { sessionId } : {}), details: error.details });
    return { status: 409, code: "SESSION_BUSY", message: busyMessage(sessionId) };
  }
  if (ArborError.isInstance(error)) return { status: context.status ?? 500, code: error.code, message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  const details = error instanceof Error && error.stack ? { stack: error.stack } : undefined;
  context.log({ level: "error", code: "INTERNAL", message, ...(sessionId !== undefined ? { sessionId } : {}), ...(details ? { details } : {}) });
  return { status: 500, code: "INTERNAL", message: "Internal error (the server's log has the detail)." };
}

/** `error` as an `Error` whose message is safe for a client (an SSE `error` chunk). */
export function clientSafeError(error: unknown, context: { sessionId?: string; log: ServerLog }): Error {
  const safe = clientError(error, context);
  if (ArborError.isInstance(error) && !SessionBusyError.isInstance(error)) return error;
  return new ArborError(safe.code, safe.message);
}

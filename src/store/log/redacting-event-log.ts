/**
 * An EventLog decorator that keeps known secrets out of the log (ours): before an append, each registered secret (6 characters or more) is replaced
 * by `[redacted]` in every string of `data` and `metadata`, keys included, in its literal, reversed, hex and base64 forms (`createSecretRedactor`).
 * `addSecret` applies to later appends; every other operation passes through. Providers, proxies and tools can echo a key into error text.
 */
import { createSecretRedactor } from "../../core/secrets.ts";
import type { EventLog, NewEvent } from "../event-log.ts";

/** An EventLog that redacts registered secrets on append. */
export interface RedactingEventLog extends EventLog {
  addSecret(secret: string): void;
}

/**
 * Wraps `log`; `secrets` are redacted from every appended event.
 *
 * @example
 * ```ts
 * const log = createRedactingEventLog(createSqliteEventLog({ path: "arbor.db" }), [process.env.OPENAI_API_KEY!]);
 * ```
 */
export function createRedactingEventLog(log: EventLog, secrets: Iterable<string> = []): RedactingEventLog {
  const redactor = createSecretRedactor(secrets);
  const redact = (event: NewEvent): NewEvent => {
    if (redactor.size === 0) return event;
    const data = redactor.redactValue(event.data);
    const metadata = event.metadata ? redactor.redactValue(event.metadata) : undefined;
    return data === event.data && metadata === event.metadata ? event : { ...event, data, ...(metadata ? { metadata } : {}) };
  };
  return {
    append: (streamId, events, options) => log.append(streamId, events.map(redact), options),
    readStream: (streamId, options) => log.readStream(streamId, options),
    readAll: (options) => log.readAll(options),
    streamVersion: (streamId) => log.streamVersion(streamId),
    listStreams: (options) => log.listStreams(options),
    deleteStream: (streamId) => log.deleteStream(streamId),
    subscribe: (options) => log.subscribe(options),
    headPosition: () => log.headPosition(),
    close: () => log.close(),
    ...(log.ownership ? { ownership: log.ownership } : {}),
    ...(log.tenantIndex ? { tenantIndex: true } : {}),
    ...(log.sessionIndex ? { sessionIndex: log.sessionIndex } : {}),
    ...(log.sessionSummaries ? { sessionSummaries: log.sessionSummaries } : {}),
    ...(log.workspaceBlobs ? { workspaceBlobs: log.workspaceBlobs } : {}),
    ...(log.memoryIndex ? { memoryIndex: log.memoryIndex } : {}),
    ...(log.encryption ? { encryption: log.encryption } : {}),
    addSecret: (secret) => redactor.add(secret),
  };
}

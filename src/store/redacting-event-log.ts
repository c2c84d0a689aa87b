/**
 * An EventLog decorator that keeps known secrets (API keys, header values, URL
 * passwords) out of the log.
 *
 * Contract (ours):
 * - before an append, every string in each event's `data` and `metadata` (object keys
 *   included) has each registered secret replaced by `[redacted]`, in its literal, reversed,
 *   hex, base64 and base64url forms, also split over lines (`createSecretRedactor`,
 *   src/core/secrets.ts); the inner log then validates and stores the redacted events;
 * - secrets shorter than 6 characters are ignored (they would redact ordinary text);
 * - secrets can be added later (`addSecret`), e.g. once a key is read; earlier events
 *   are not rewritten (the log is append-only);
 * - reads, subscriptions and every other operation pass through unchanged.
 * Why: providers, proxies and tools (a model's `bash` can read its parent's environment)
 * can echo a key into error text or tool output, and no key or header
 * value may ever be written to the log.
 *
 * @example
 * ```ts
 * const log = createRedactingEventLog(createSqliteEventLog({ path }), [process.env.OPENAI_API_KEY ?? ""]);
 * ```
 */
import { createSecretRedactor } from "../core/secrets.ts";
import type { EventLog, NewEvent } from "./event-log.ts";

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
    addSecret: (secret) => redactor.add(secret),
  };
}

/**
 * An EventLog decorator that keeps known secrets (API keys, header values, URL
 * passwords) out of the log.
 *
 * Contract (ours):
 * - before an append, every string in each event's `data` and `metadata` (object keys
 *   included) has each registered secret replaced by `[redacted]`; the inner log then
 *   validates and stores the redacted events;
 * - secrets shorter than 6 characters are ignored (they would redact ordinary text);
 * - secrets can be added later (`addSecret`), e.g. once a key is read; earlier events
 *   are not rewritten (the log is append-only);
 * - reads, subscriptions and every other operation pass through unchanged.
 * Why: providers, proxies and tools (a model's `bash` can read its parent's environment)
 * can echo a key into error text or tool output; issue 4 requires that no key or header
 * value is ever written to the log.
 *
 * @example
 * ```ts
 * const log = createRedactingEventLog(createSqliteEventLog({ path }), [process.env.OPENAI_API_KEY ?? ""]);
 * ```
 */
import type { EventLog, NewEvent } from "./event-log.ts";

/** An EventLog that redacts registered secrets on append. */
export interface RedactingEventLog extends EventLog {
  addSecret(secret: string): void;
}

const MIN_SECRET_LENGTH = 6;
const REDACTED = "[redacted]";

function redactString(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  return result;
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return redactString(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactString(key, secrets), redactValue(item, secrets)]));
  }
  return value;
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
  const known = new Set<string>();
  const addSecret = (secret: string) => {
    if (typeof secret === "string" && secret.length >= MIN_SECRET_LENGTH) known.add(secret);
  };
  for (const secret of secrets) addSecret(secret);
  const redact = (event: NewEvent): NewEvent => {
    if (known.size === 0) return event;
    const list = [...known].sort((a, b) => b.length - a.length);
    return {
      ...event,
      data: redactValue(event.data, list),
      ...(event.metadata ? { metadata: redactValue(event.metadata, list) as NewEvent["metadata"] } : {}),
    };
  };
  return {
    append: (streamId, events, options) => log.append(streamId, events.map(redact), options),
    readStream: (streamId, options) => log.readStream(streamId, options),
    readAll: (options) => log.readAll(options),
    streamVersion: (streamId) => log.streamVersion(streamId),
    listStreams: () => log.listStreams(),
    deleteStream: (streamId) => log.deleteStream(streamId),
    subscribe: (options) => log.subscribe(options),
    headPosition: () => log.headPosition(),
    close: () => log.close(),
    ...(log.ownership ? { ownership: log.ownership } : {}),
    addSecret,
  };
}

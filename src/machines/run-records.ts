/**
 * Builders of the events the run actor records (`src/store/events/run-events.ts`)
 * and of the `entry.appended` events that persist its messages.
 *
 * Contract (ours):
 * - every event carries `metadata.runId`, and `metadata.turnId` inside a turn;
 * - `entry.appended` events are built without `parentId`: the session writer
 *   chains them to the leaf at commit time (`session-writer.ts`);
 * - a message is persisted as pi does (`message` entry, `custom` role as a
 *   `custom_message` entry); pure apart from ids and ISO timestamps.
 *
 * @example
 * ```ts
 * const { entryId, events } = messageRecords(message, { runId, turnId });
 * ```
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { EventMetadata, NewEvent } from "../store/event-log.ts";
import type { ArborEventData, ArborEventType } from "../store/events/catalogue.ts";

/**
 * A fresh 8-hex entry id (pi's shape; the writer re-draws on a collision).
 *
 * @example
 * ```ts
 * createEntryId(); // e.g. "3f9a0c12"
 * ```
 */
export function createEntryId(): string {
  return randomUUID().replaceAll("-", "").slice(0, 8);
}

/**
 * A fresh message id for `message.*` events (UUID).
 *
 * @example
 * ```ts
 * runEvent(scope, "message.started", { messageId: createMessageId(), role: "user" });
 * ```
 */
export function createMessageId(): string {
  return randomUUID();
}

/**
 * Correlation of one recorded event.
 *
 * @example
 * ```ts
 * const scope: RecordScope = { runId: "r1", turnId: "r1:0" };
 * ```
 */
export interface RecordScope {
  runId: string;
  turnId?: string;
}

/**
 * A run event with the scope's metadata.
 *
 * @example
 * ```ts
 * runEvent({ runId: "r1" }, "run.ended", { runId: "r1", status: "done", turns: 2 });
 * ```
 */
export function runEvent<const Type extends ArborEventType>(scope: RecordScope, type: Type, data: ArborEventData<Type>): NewEvent<Type, ArborEventData<Type>> {
  const metadata: EventMetadata = { runId: scope.runId };
  if (scope.turnId) metadata.turnId = scope.turnId;
  return { type, data, metadata };
}

/**
 * The `entry.appended` event persisting one message (pi's entry shape), with the entry id.
 *
 * @example
 * ```ts
 * writer.push(messageEntryEvent({ runId }, userText("hi")));
 * ```
 */
export function messageEntryEvent(scope: RecordScope, message: AgentMessage, entryId = createEntryId()): NewEvent {
  const timestamp = new Date().toISOString();
  const entry =
    message.role === "custom"
      ? {
          type: "custom_message",
          id: entryId,
          parentId: null,
          timestamp,
          customType: message.customType,
          content: message.content,
          display: message.display,
          ...(message.details === undefined ? {} : { details: message.details }),
        }
      : { type: "message", id: entryId, parentId: null, timestamp, message };
  return { ...runEvent(scope, "entry.appended", { entry }) };
}

/**
 * The `entry.appended` event of a non-message entry (settings changes: model, thinking level, tools).
 *
 * @example
 * ```ts
 * writer.push(entryEvent({ runId }, { type: "model_change", provider: "openai", modelId: "gpt-4o-mini" }));
 * ```
 */
export function entryEvent(scope: RecordScope, entry: Record<string, unknown> & { type: string }): NewEvent {
  return runEvent(scope, "entry.appended", {
    entry: { ...entry, id: createEntryId(), parentId: null, timestamp: new Date().toISOString() },
  });
}

/**
 * The role recorded in `message.*` events (synthetic summary roles are recorded as custom).
 *
 * @example
 * ```ts
 * recordedRole(message); // "user" | "assistant" | …
 * ```
 */
export function recordedRole(message: AgentMessage): "user" | "assistant" | "toolResult" | "custom" | "bashExecution" {
  switch (message.role) {
    case "user":
    case "assistant":
    case "toolResult":
    case "custom":
    case "bashExecution":
      return message.role;
    default:
      return "custom";
  }
}

/**
 * The complete record of a non-streamed message: `message.started`,
 * `entry.appended`, `message.ended` (pi's message_start / message_end, persisted).
 *
 * @example
 * ```ts
 * const { entryId, events } = messageRecords(userText("hi"), { runId, turnId });
 * ```
 */
export function messageRecords(message: AgentMessage, scope: RecordScope): { entryId: string; events: NewEvent[] } {
  const entryId = createEntryId();
  const messageId = createMessageId();
  const role = recordedRole(message);
  return {
    entryId,
    events: [
      runEvent(scope, "message.started", { messageId, role }),
      messageEntryEvent(scope, message, entryId),
      runEvent(scope, "message.ended", { messageId, role, entryId }),
    ],
  };
}

/**
 * `message.ended` for an assistant message (with stop reason, error and usage).
 *
 * @example
 * ```ts
 * writer.push(assistantEnded(scope, messageId, assistant, entryId));
 * ```
 */
export function assistantEnded(
  scope: RecordScope,
  messageId: string,
  message: AssistantMessage,
  entryId: string | undefined,
): NewEvent {
  return runEvent(scope, "message.ended", {
    messageId,
    role: "assistant",
    stopReason: message.stopReason,
    usage: message.usage,
    ...(entryId ? { entryId } : { discarded: true }),
    ...(message.errorMessage ? { errorMessage: message.errorMessage } : {}),
  });
}

/**
 * Builders of the events the run actor records (every one with `metadata.runId`, and `turnId` inside a turn) and of the `entry.appended` events
 * that persist its messages, built without `parentId` (the writer chains them at commit time).
 */
import { randomUUID } from "node:crypto";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { EventMetadata, NewEvent } from "../store/event-log.ts";
import type { ArborEventData, ArborEventType } from "../store/events/catalogue.ts";

/** A fresh 8-hex entry id (pi's shape; the writer re-draws on a collision). */
export function createEntryId(): string {
  return randomUUID().replaceAll("-", "").slice(0, 8);
}

/** A fresh message id for `message.*` events (UUID). */
export function createMessageId(): string {
  return randomUUID();
}

/** Correlation of one recorded event. */
export interface RecordScope {
  runId: string;
  turnId?: string;
}

/** A run event with the scope's metadata. */
export function runEvent<const Type extends ArborEventType>(scope: RecordScope, type: Type, data: ArborEventData<Type>): NewEvent<Type, ArborEventData<Type>> {
  const metadata: EventMetadata = { runId: scope.runId };
  if (scope.turnId) metadata.turnId = scope.turnId;
  return { type, data, metadata };
}

/** The `entry.appended` event persisting one message (pi's entry shape), with the entry id. */
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

/** The `entry.appended` event of a non-message entry (settings changes: model, thinking level, tools). */
export function entryEvent(scope: RecordScope, entry: Record<string, unknown> & { type: string }): NewEvent {
  return runEvent(scope, "entry.appended", {
    entry: { ...entry, id: createEntryId(), parentId: null, timestamp: new Date().toISOString() },
  });
}

/** The role recorded in `message.*` events (synthetic summary roles are recorded as custom). */
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
 * The complete record of a non-streamed message: `message.started`, `entry.appended`, `message.ended` (pi's message_start / message_end, persisted).
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

/** `message.ended` for an assistant message (with stop reason, error and usage). */
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

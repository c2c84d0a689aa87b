/**
 * Where a regenerated assistant message (`Chat.regenerate()`, message id = run id) starts again: the first user message logged inside that run (or
 * the last before it); the caller moves the leaf there and prompts it again as a sibling branch. No such run or message is a `404`.
 */
import type { UserMessage } from "../core/messages.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";

/** The user message entry to start again from (its id and message), or why there is none. */
export type RegenerateTarget = { entryId: string; message: UserMessage } | { status: 404; code: string; error: string };

const isUserMessage = (message: unknown): message is UserMessage =>
  typeof message === "object" && message !== null && "role" in message && message.role === "user";

const userEntry = (event: StoredEvent): { entryId: string; message: UserMessage } | undefined => {
  if (!isEventOfType(event, "entry.appended")) return undefined;
  const entry = event.data.entry;
  return entry.type === "message" && isUserMessage(entry.message) ? { entryId: entry.id, message: entry.message } : undefined;
};

/** Finds the user message entry run `messageId` started from (see the module contract). */
export async function regenerateTarget(log: EventLog, streamId: string, messageId: string | undefined): Promise<RegenerateTarget> {
  const events = await log.readStream(streamId);
  const starts = events.filter((event) => isEventOfType(event, "run.started") && (messageId === undefined || event.data.runId === messageId));
  const start = starts[starts.length - 1];
  if (!start) return { status: 404, code: "MESSAGE_NOT_FOUND", error: messageId === undefined ? "The session has no assistant message to regenerate." : `No assistant message "${messageId}" to regenerate.` };
  const runId = isEventOfType(start, "run.started") ? start.data.runId : undefined;
  const at = events.indexOf(start);
  for (let index = at + 1; index < events.length; index++) {
    const event = events[index];
    if (isEventOfType(event, "run.ended") && event.data.runId === runId) break;
    const found = userEntry(event);
    if (found) return found;
  }
  for (let index = at - 1; index >= 0; index--) {
    const found = userEntry(events[index]);
    if (found) return found;
  }
  return { status: 404, code: "MESSAGE_NOT_FOUND", error: `The assistant message "${runId}" has no user message to regenerate from.` };
}

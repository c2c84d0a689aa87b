/**
 * The end of a tool batch in the tree: where a fork or a move "at" one of a batch's
 * results really lands.
 *
 * A parallel batch commits each tool result the moment its tool finishes, so the results of
 * one assistant message are chained in completion order. A prefix of that chain lacks the
 * results of siblings that finished later, and the context of such a prefix would invent a
 * "missing" result for them. So the results of one batch count as one unit.
 *
 * Contract (ours):
 * - an assistant message that makes tool calls is the start of its batch: its batch end is found
 *   as below, from the assistant itself (so a move to it does not leave its calls unanswered
 *   while their results are in the tree; with no result recorded it is its own batch end);
 * - another entry that is not a `toolResult` message, or whose run of `toolResult` ancestors does
 *   not start at an assistant message making that call, is its own batch end;
 * - otherwise the batch end is found by walking down from the entry: at each step, the
 *   earliest child (children are ordered by time) that is a `toolResult` for a call of that
 *   assistant not answered yet on the path; the walk stops when every call is answered or no
 *   such child exists. The last entry reached is the batch end;
 * - O(batch size × children); never throws.
 *
 * @example
 * ```ts
 * const target = batchEnd(session.view, entryId); // the batch's last result when entryId is one of them
 * ```
 */
import type { SessionEntry } from "../core/entries.ts";
import type { AgentMessage, ToolCall } from "../core/messages.ts";

/** What {@link batchEnd} reads of a session view. */
export interface BatchEndSource {
  getEntry(id: string): SessionEntry | undefined;
  getChildren(id: string): SessionEntry[];
}

function messageOf(entry: SessionEntry | undefined): AgentMessage | undefined {
  return entry?.type === "message" ? (entry as { message: AgentMessage }).message : undefined;
}

function resultCallId(entry: SessionEntry | undefined): string | undefined {
  const message = messageOf(entry);
  return message?.role === "toolResult" ? message.toolCallId : undefined;
}

/**
 * The last result of the tool batch `entryId` belongs to, or `entryId` itself (see the module contract).
 *
 * @example
 * ```ts
 * await repository.fork(id, { entryId: batchEnd(view, entryId) });
 * ```
 */
export function batchEnd(source: BatchEndSource, entryId: string): string {
  const start = source.getEntry(entryId);
  const answered = new Set<string>();
  let cursor: SessionEntry | undefined = start;
  while (cursor && resultCallId(cursor) !== undefined) {
    answered.add(resultCallId(cursor)!);
    cursor = cursor.parentId ? source.getEntry(cursor.parentId) : undefined;
  }
  const assistant = messageOf(cursor);
  if (assistant?.role !== "assistant" || !Array.isArray(assistant.content)) return entryId;
  const calls = new Set(assistant.content.filter((block): block is ToolCall => block?.type === "toolCall").map((call) => call.id));
  if (calls.size === 0 || ![...answered].every((id) => calls.has(id))) return entryId;
  let end = entryId;
  while (answered.size < calls.size) {
    const next = source.getChildren(end).find((child) => {
      const id = resultCallId(child);
      return id !== undefined && calls.has(id) && !answered.has(id);
    });
    if (!next) break;
    answered.add(resultCallId(next)!);
    end = next.id;
  }
  return end;
}

/**
 * The end of a tool batch in the tree (ours): where a fork or a move "at" one of a batch's results really lands. A parallel batch chains its
 * results in completion order, so a prefix of that chain would lack siblings' results; the batch end is found by walking down from the entry to the
 * earliest child answering a call not yet answered on the path, until every call is answered. An assistant message making calls starts its batch;
 * any other entry outside a batch is its own end. Never throws.
 */
import type { SessionEntry } from "../../core/entries.ts";
import type { AgentMessage, ToolCall } from "../../core/messages.ts";

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

/** The last result of the tool batch `entryId` belongs to, or `entryId` itself (see the module contract). */
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

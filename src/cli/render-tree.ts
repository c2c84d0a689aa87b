/**
 * ASCII rendering of a session tree for `arbor tree`.
 *
 * Contract (ours): one line per entry, children indented under their parent in time order; the current leaf is marked `*`; labels are shown as
 * `[label]`; compactions and branch summaries are named; control characters are shown as `\xNN` (`printable.ts`). Pure: no I/O.
 */
import type { SessionEntry } from "../core/entries.ts";
import { messageText } from "../core/messages.ts";
import type { SessionTreeNode } from "../store/session-types.ts";
import { printable } from "./printable.ts";

const PREVIEW = 60;

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW ? `${flat.slice(0, PREVIEW - 1)}…` : flat;
}

/** A one-line description of an entry. */
export function describeEntry(entry: SessionEntry): string {
  const data = entry as Record<string, unknown>;
  switch (entry.type) {
    case "message": {
      const message = (entry as Extract<SessionEntry, { type: "message" }>).message;
      if (message.role === "assistant") {
        const calls = message.content.filter((block) => block.type === "toolCall").map((block) => block.name);
        const text = preview(messageText(message));
        const parts = [text && `"${text}"`, calls.length > 0 && `calls ${calls.join(", ")}`, message.stopReason !== "stop" && message.stopReason !== "toolUse" && `(${message.stopReason})`];
        return `assistant ${parts.filter(Boolean).join(" ")}`.trim();
      }
      if (message.role === "toolResult") return `toolResult ${message.toolName}${message.isError ? " (error)" : ""}: ${preview(messageText(message))}`;
      return `${message.role}: ${preview(messageText(message))}`;
    }
    case "compaction":
      return `compaction (${String(data.tokensBefore)} tokens before; keeps from ${String(data.firstKeptEntryId)})`;
    case "branch_summary":
      return `branch summary from ${String(data.fromId)}: ${preview(String(data.summary ?? ""))}`;
    case "model_change":
      return `model → ${String(data.provider)}:${String(data.modelId)}`;
    case "thinking_level_change":
      return `thinking → ${String(data.thinkingLevel)}`;
    case "active_tools_change":
      return `tools → ${(data.toolNames as string[] | undefined)?.join(", ") ?? ""}`;
    case "label":
      return data.label === undefined ? `label cleared on ${String(data.targetId)}` : `label "${String(data.label)}" on ${String(data.targetId)}`;
    case "session_info":
      return `name → ${String(data.name ?? "(cleared)")}`;
    case "custom":
      return `custom ${String(data.customType)}`;
    case "custom_message":
      return `custom message ${String(data.customType)}`;
    default:
      return `${entry.type} (unknown entry kind, kept for export)`;
  }
}

/** Renders the tree; `leafId` gets a `*` marker. Iterative, so deep chains do not overflow the stack. */
export function renderTree(roots: SessionTreeNode[], options: { leafId: string | null }): string {
  const lines: string[] = [];
  type Frame = { node: SessionTreeNode; prefix: string; last: boolean; top: boolean };
  const stack: Frame[] = roots.map((node, index) => ({ node, prefix: "", last: index === roots.length - 1, top: true })).reverse();
  while (stack.length > 0) {
    const { node, prefix, last, top } = stack.pop() as Frame;
    const marker = node.entry.id === options.leafId ? "* " : "  ";
    const branch = top ? "" : last ? "└─ " : "├─ ";
    const label = node.label ? ` [${node.label}]` : "";
    lines.push(printable(`${marker}${prefix}${branch}${node.entry.id} ${describeEntry(node.entry)}${label}`));
    const childPrefix = top ? prefix : prefix + (last ? "   " : "│  ");
    // A chain of single children is printed flat: most sessions are long chains.
    const single = node.children.length === 1;
    for (let index = node.children.length - 1; index >= 0; index -= 1) {
      stack.push({ node: node.children[index], prefix: childPrefix, last: single || index === node.children.length - 1, top: single });
    }
  }
  return lines.join("\n");
}

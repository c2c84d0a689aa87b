/**
 * Session entries, the nodes of a session tree, with pi's field meanings so a session exports to pi v3 JSONL: `id`, `parentId` (`null` at a root),
 * ISO `timestamp`; immutable once appended (only the leaf moves). An unknown entry type is kept verbatim as {@link UnknownEntry} and left out of
 * the context.
 */
import type { AgentMessage, ImageContent, TextContent, ThinkingLevel, Usage } from "./messages.ts";

/** Fields every entry has. */
export interface EntryBase {
  id: string;
  parentId: string | null;
  /** ISO 8601 timestamp. */
  timestamp: string;
}

/** A stored message (user, assistant, toolResult, custom, bashExecution). */
export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}

/** The thinking level changed from here on. */
export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: ThinkingLevel;
}

/** The model changed from here on. */
export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}

/** The set of active tools changed from here on (ours). */
export interface ActiveToolsChangeEntry extends EntryBase {
  type: "active_tools_change";
  toolNames: string[];
}

/** File operations tracked through compactions and branch summaries. Source: pi. */
export interface FileOperationsDetails {
  readFiles: string[];
  modifiedFiles: string[];
}

/**
 * A compaction: the path before `firstKeptEntryId` is replaced by `summary`. `tokensBefore` is the context size in tokens when it was made.
 * `retainedTail` (ours) lists the ids kept verbatim, for inspection.
 */
export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  retainedTail?: string[];
  details?: unknown;
  usage?: Usage;
  fromHook?: boolean;
}

/** A summary of an abandoned branch, a child of the new leaf. `fromId` is an entry id or `"root"`. */
export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: unknown;
  usage?: Usage;
  fromHook?: boolean;
}

/** Application state; never in the context. */
export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}

/** An application message that is in the context (as a `custom` message, sent as user). */
export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
}

/** A label on `targetId`; `label` undefined clears it. The latest label wins. */
export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  label?: string;
}

/** The session's name; empty or undefined clears it. */
export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}

/** pi 1.x: spend outside the context (e.g. `kind: "cache_warm"`), counted in `getStats()` totals, never in the context. */
export interface UsageEntry extends EntryBase {
  type: "usage";
  kind: string;
  provider?: string;
  model?: string;
  usage?: Usage;
}

/**
 * pi 1.x: an append-only edit of what an earlier entry contributes to the model's context (pi 1.6's `ContextEditEntry`). `replacement: null` omits
 * the target; `{ content }` replaces the content of a user, assistant, toolResult or custom message (role and other fields stay). Branch-relative:
 * only edits among the context's selected entries count, the latest per target wins. A replacement of another shape is kept but not applied (a
 * `context_edit_unapplied` diagnostic).
 */
export interface ContextEditEntry extends EntryBase {
  type: "context_edit";
  targetId: string;
  replacement: { content: string | unknown[] } | null | Record<string, unknown>;
}

/** An entry type Arbor does not know, kept verbatim for round-trips. */
export interface UnknownEntry extends EntryBase {
  type: string;
  [key: string]: unknown;
}

/** Every entry kind Arbor understands. */
export type KnownEntry =
  | MessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | ActiveToolsChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry
  | UsageEntry
  | ContextEditEntry;

/** A session entry. */
export type SessionEntry = KnownEntry | UnknownEntry;

/**
 * The entry types Arbor understands.
 * @example
 * const unknown = entries.filter((entry) => !(KNOWN_ENTRY_TYPES as readonly string[]).includes(entry.type));
 */
export const KNOWN_ENTRY_TYPES = [
  "message",
  "thinking_level_change",
  "model_change",
  "active_tools_change",
  "compaction",
  "branch_summary",
  "custom",
  "custom_message",
  "label",
  "session_info",
  "usage",
  "context_edit",
] as const;

/**
 * True if the entry is one of {@link KNOWN_ENTRY_TYPES}.
 * @example
 * for (const entry of session.view.getEntries()) if (!isKnownEntry(entry)) console.warn("kept as is:", entry.type);
 */
export function isKnownEntry(entry: SessionEntry): entry is KnownEntry {
  return (KNOWN_ENTRY_TYPES as readonly string[]).includes(entry.type);
}

/** The message of a `message` entry, narrowed by the entry's type (no cast); `undefined` for any other entry, known or not. */
export function messageOfEntry(entry: SessionEntry | undefined): AgentMessage | undefined {
  return entry !== undefined && isKnownEntry(entry) && entry.type === "message" ? entry.message : undefined;
}

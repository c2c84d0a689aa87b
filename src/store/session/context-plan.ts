/**
 * The path and the plan of a context build (`context.ts` states the projection): {@link pathToRoot} walks `parentId` links root-ward and never
 * throws or loops; {@link planFull} finds, on cheap look-ups (ids, types, roles), the last settings, the last compaction and the entries a full
 * build emits and edits, as plain ids a snapshot can store.
 */
import type { CompactionEntry, SessionEntry } from "../../core/entries.ts";
import { isKnownEntry } from "../../core/entries.ts";
import type { AgentMessage } from "../../core/messages.ts";
import { roleOf } from "./lazy-entries.ts";
import type { ContextDiagnostic } from "../session-types.ts";

/** Read access to a session's entries by id. */
export interface EntrySource {
  /** The full entry. */
  getEntry(id: string): SessionEntry | undefined;
  /**
   * Optional cheap look-up that may return a stub (id, parentId, type, timestamp, role) of an entry not read yet (see `lazy-entries.ts`); used to
   * walk paths without reading content.
   */
  peek?(id: string): SessionEntry | undefined;
  /** Optional hint: these entries are about to be read (lets a lazy source read them in bulk). */
  prefetch?(ids: readonly string[]): void;
  /** Optional: the number of entries; lets the path walk skip per-step cycle bookkeeping. */
  size?(): number;
  /**
   * Optional: the plan of a full build at `leafId` found without walking the path (the session index, `index-plan.ts`), its entries made cheap to
   * read; undefined: walk the path as usual.
   */
  plan?(leafId: string): ContextPlan | undefined;
  /**
   * Optional: a full build's plan at `leafId` whose emitted messages the source delivers itself (ours: the stored context text of the session index,
   * `context-chunks.ts`), tried before `plan`; undefined: `plan`, then a path walk.
   */
  planEmitting?(leafId: string): EmittingPlan | undefined;
}

/** A full build's plan plus its emitted messages, delivered by the source (see {@link EntrySource.planEmitting}). */
export interface EmittingPlan {
  /** The plan; its `emitIds` are not read. */
  plan: ContextPlan;
  /**
   * Calls `visit` with the id and message of every entry the plan emits, in emission order (what `entryToMessage` of `context-state.ts` gives for
   * each, entries that give nothing skipped).
   */
  forEachEmitted(visit: (entryId: string, message: AgentMessage) => void): void;
}

/** The result of walking from an entry to its root. */
export interface PathResult {
  /** Root first. */
  path: SessionEntry[];
  diagnostics: ContextDiagnostic[];
  /** Ids referenced as parents that do not exist (yet). */
  missingParents: string[];
}

/**
 * Walks `parentId` links from `leafId` to the root and returns the path root first. Stops at a missing parent or a cycle and reports it; never
 * throws, never loops.
 */
export function pathToRoot(source: EntrySource, leafId: string): PathResult {
  const reversed: SessionEntry[] = [];
  const diagnostics: ContextDiagnostic[] = [];
  const missingParents: string[] = [];
  // With a known size, a walk longer than the session proves a cycle: redo it with bookkeeping.
  const limit = source.size?.();
  const seen = limit === undefined ? new Set<string>() : undefined;
  let current = source.getEntry(leafId);
  while (current) {
    if (limit !== undefined && reversed.length > limit) {
      return pathToRoot({ getEntry: (id) => source.getEntry(id) }, leafId);
    }
    if (seen?.has(current.id)) {
      diagnostics.push({
        kind: "parent_cycle",
        message: `Entry ${current.id} is its own ancestor; the path was cut there.`,
        entryId: current.id,
      });
      break;
    }
    seen?.add(current.id);
    reversed.push(current);
    const parentId: string | null = current.parentId;
    if (!parentId) break;
    const parent = source.getEntry(parentId);
    if (!parent) {
      missingParents.push(parentId);
      diagnostics.push({
        kind: "missing_parent",
        message: `Entry ${current.id} names parent ${parentId}, which is not in the session; the path starts at ${current.id}.`,
        entryId: current.id,
      });
    }
    current = parent;
  }
  return { path: reversed.reverse(), diagnostics, missingParents };
}

/**
 * What a full build needs, found by walking the path on cheap look-ups: ids only, so it can be stored with a snapshot and executed later without
 * walking the path again.
 */
export interface ContextPlan {
  leafId: string;
  /** Path and unknown-entry diagnostics, in path order. */
  diagnostics: ContextDiagnostic[];
  missingParents: string[];
  /** The last thinking, model-setting and tools entries on the path. */
  settingIds: string[];
  /** The last compaction on the path, or null. */
  compactionId: string | null;
  /** Entries that contribute messages, in emission order (after the compaction summary). */
  emitIds: string[];
  /** `context_edit` entries among the selected entries (kept range and after the compaction), in path order. */
  editIds?: string[];
}

const EMITTING = new Set(["message", "custom_message", "branch_summary"]);

/** The plan of a full build at `leafId`: the path walked on `source.peek` when there is one, only the compaction read in full. */
export function planFull(source: EntrySource, leafId: string): ContextPlan {
  // Walk and plan on cheap look-ups; read full entries only where content is needed.
  const peek = source.peek ? { getEntry: (id: string) => source.peek!(id), size: source.size } : source;
  const { path, diagnostics, missingParents } = pathToRoot(peek, leafId);
  let compactionIndex = -1;
  let thinkingIndex = -1;
  let modelIndex = -1;
  let toolsIndex = -1;
  path.forEach((entry, index) => {
    switch (entry.type) {
      case "context_edit":
        break;
      case "thinking_level_change":
        thinkingIndex = index;
        break;
      case "model_change":
        modelIndex = index;
        break;
      case "active_tools_change":
        toolsIndex = index;
        break;
      case "compaction":
        compactionIndex = index;
        break;
      case "message":
        if (roleOf(entry) === "assistant") modelIndex = index;
        break;
      default:
        if (!isKnownEntry(entry)) {
          diagnostics.push({ kind: "unknown_entry", message: `Entry ${entry.id} has unknown type "${entry.type}"; it is kept but not sent to the model.`, entryId: entry.id });
        }
    }
  });
  const settingIds = [thinkingIndex, modelIndex, toolsIndex].filter((index) => index >= 0).map((index) => path[index].id);
  const emitIds: string[] = [];
  const editIds: string[] = [];
  /** Plans `from…to-1`: emitting entries (kept ones without system messages) and the edits among them. */
  const select = (from: number, to: number, kept: boolean) => {
    for (let index = from; index < to; index++) {
      const entry = path[index];
      if (entry.type === "context_edit") editIds.push(entry.id);
      else if (EMITTING.has(entry.type) && !(kept && roleOf(entry) === "system")) emitIds.push(entry.id);
    }
  };
  if (compactionIndex < 0) {
    select(0, path.length, false);
  } else {
    const compaction = (source.getEntry(path[compactionIndex].id) ?? path[compactionIndex]) as CompactionEntry;
    const firstKept = path.findIndex((entry, index) => index < compactionIndex && entry.id === compaction.firstKeptEntryId);
    if (firstKept >= 0) select(firstKept, compactionIndex, true);
    select(compactionIndex + 1, path.length, false);
  }
  return {
    leafId,
    diagnostics,
    missingParents,
    settingIds,
    compactionId: compactionIndex < 0 ? null : path[compactionIndex].id,
    emitIds,
    ...(editIds.length > 0 ? { editIds } : {}),
  };
}

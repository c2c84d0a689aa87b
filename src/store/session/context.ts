/**
 * The context projection: the messages, thinking level, model and active tools the model sees at one leaf (pi's `buildSessionContext`,
 * `docs/pi-parity.md`; ours where marked).
 * - the path runs root→leaf by `parentId`; the last `thinking_level_change`, model (`model_change` or assistant message, whichever is later) and
 *   `active_tools_change` (ours; `null` = all tools) on it apply;
 * - the LAST compaction gives its system message and summary, then the kept entries from `firstKeptEntryId` (no system messages), then what follows;
 *   `message`, `custom_message` and non-empty `branch_summary` entries are emitted, other kinds reported as `unknown_entry`;
 * - `context_edit` entries among the selected ones apply as pi 1.6's (the latest per target wins; `null` omits, `{ content }` replaces); an edit of
 *   another shape is left unapplied with a diagnostic (ours);
 * - the tool-pairing invariant (`pairing.ts`) holds on every context; a cycle or a missing parent stops the walk with a diagnostic, an unknown leaf
 *   throws `EntryNotFoundError` (ours);
 * - incremental: a leaf at most 64 entries below a cached leaf extends its state (a compaction or `context_edit` among them rebuilds); a full build
 *   is a plan (a path walk on ids) then its execution, and a plan stored with a snapshot can be `seed`ed.
 */
import { EntryNotFoundError } from "../../core/errors.ts";
import type { CompactionEntry, SessionEntry } from "../../core/entries.ts";
import { isKnownEntry } from "../../core/entries.ts";
import type { AgentMessage, ThinkingLevel } from "../../core/messages.ts";
import { roleOf } from "./lazy-entries.ts";
import { createPairing, type Pairing } from "./pairing.ts";
import type { ContextDiagnostic, SessionContext } from "../session-types.ts";

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
   * Calls `visit` with the id and message of every entry the plan emits, in emission order (what {@link entryToMessage} gives for each, entries that
   * give nothing skipped).
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
 * The context message an entry contributes, if any (pi's `sessionEntryToContextMessages`, a compaction aside): `message` → its message (any role),
 * `custom_message` → a `custom` message (timestamp in ms from the entry's ISO time), `branch_summary` with a non-empty summary → `branchSummary`;
 * anything else → undefined.
 */
export function entryToMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return (entry as { message: AgentMessage }).message;
    case "custom_message": {
      const custom = entry as Extract<SessionEntry, { type: "custom_message" }>;
      return {
        role: "custom",
        customType: custom.customType,
        content: custom.content,
        display: custom.display,
        details: custom.details,
        timestamp: new Date(custom.timestamp).getTime(),
      };
    }
    case "branch_summary": {
      const summary = entry as Extract<SessionEntry, { type: "branch_summary" }>;
      if (!summary.summary) return undefined;
      return { role: "branchSummary", summary: summary.summary, fromId: summary.fromId, timestamp: new Date(summary.timestamp).getTime() };
    }
    default:
      return undefined;
  }
}

interface LeafState {
  leafId: string;
  pairing: Pairing;
  thinkingLevel: ThinkingLevel;
  model: { provider: string; modelId: string } | null;
  activeToolNames: string[] | null;
  diagnostics: ContextDiagnostic[];
  /** `context_edit` replacements by target id (the latest on the path). */
  edits: Map<string, unknown>;
}

function applySettings(state: LeafState, entry: SessionEntry): void {
  switch (entry.type) {
    case "thinking_level_change":
      state.thinkingLevel = (entry as { thinkingLevel: ThinkingLevel }).thinkingLevel;
      break;
    case "model_change": {
      const change = entry as { provider: string; modelId: string };
      state.model = { provider: change.provider, modelId: change.modelId };
      break;
    }
    case "active_tools_change":
      state.activeToolNames = [...(entry as { toolNames: string[] }).toolNames];
      break;
    case "message": {
      const message = (entry as { message: AgentMessage }).message;
      if (message.role === "assistant") state.model = { provider: message.provider, modelId: message.model };
      break;
    }
    default:
      if (!isKnownEntry(entry)) {
        state.diagnostics.push({ kind: "unknown_entry", message: `Entry ${entry.id} has unknown type "${entry.type}"; it is kept but not sent to the model.`, entryId: entry.id });
      }
  }
}

/** The content a `context_edit` replacement gives, or undefined when it is not `{ content: string | array }`. */
function replacementContent(replacement: unknown): string | unknown[] | undefined {
  if (typeof replacement !== "object" || replacement === null) return undefined;
  const content = (replacement as { content?: unknown }).content;
  return typeof content === "string" || Array.isArray(content) ? content : undefined;
}

const EDITABLE_ROLES = new Set(["user", "assistant", "toolResult", "custom"]);

function emit(state: LeafState, entry: SessionEntry): void {
  const message = entryToMessage(entry);
  if (message) emitMessage(state, entry.id, message);
}

/**
 * Adds the message entry `entryId` contributes, after its `context_edit` (if any). With `keptBeforeCompaction`, a system message is left out (pi 1.6
 * folds it into the checkpoint).
 */
function emitMessage(state: LeafState, entryId: string, message: AgentMessage, keptBeforeCompaction = false): void {
  if (message.role === "system") {
    if (keptBeforeCompaction) return;
    if (message.content === undefined || message.content === null) message = { ...message, content: "" };
  }
  if (state.edits.size > 0 && state.edits.has(entryId)) {
    const replacement = state.edits.get(entryId);
    if (replacement === null) return;
    const content = replacementContent(replacement);
    if (content === undefined) {
      state.diagnostics.push({
        kind: "context_edit_unapplied",
        message: `A context_edit of entry ${entryId} has a replacement that is not { content: string | array }; the entry is sent unchanged.`,
        entryId,
      });
    } else if (EDITABLE_ROLES.has(message.role)) {
      const normalized = typeof content === "string" && (message.role === "assistant" || message.role === "toolResult") ? [{ type: "text", text: content }] : content;
      message = { ...message, content: normalized } as AgentMessage;
    }
  }
  state.pairing.push(message, entryId);
}

function addEdit(state: LeafState, entry: SessionEntry): void {
  const edit = entry as { targetId?: unknown; replacement?: unknown };
  if (typeof edit.targetId === "string") state.edits.set(edit.targetId, edit.replacement);
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

/** How many entries back a build looks for a cached leaf to extend (an ordinary turn appends a few). */
const MAX_EXTENSION = 64;

function planFull(source: EntrySource, leafId: string): ContextPlan {
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

function executePlan(source: EntrySource, plan: ContextPlan, emitting?: EmittingPlan): LeafState {
  const state: LeafState = { leafId: plan.leafId, pairing: createPairing(), thinkingLevel: "off", model: null, activeToolNames: null, diagnostics: [...plan.diagnostics], edits: new Map() };
  for (const id of plan.editIds ?? []) {
    const entry = source.getEntry(id);
    if (entry) addEdit(state, entry);
  }
  for (const id of plan.settingIds) {
    const entry = source.getEntry(id);
    if (entry) applySettings(state, entry);
  }
  if (plan.compactionId !== null) {
    const compaction = source.getEntry(plan.compactionId) as CompactionEntry | undefined;
    if (compaction && !(state.edits.has(compaction.id) && state.edits.get(compaction.id) === null)) {
      const checkpoint = (compaction as { systemMessage?: unknown }).systemMessage;
      if (typeof checkpoint === "object" && checkpoint !== null) state.pairing.push(checkpoint as AgentMessage, compaction.id);
      state.pairing.push(
        { role: "compactionSummary", summary: compaction.summary, tokensBefore: compaction.tokensBefore, timestamp: new Date(compaction.timestamp).getTime() },
        compaction.id,
      );
    }
  }
  if (emitting) {
    emitting.forEachEmitted((entryId, message) => emitMessage(state, entryId, message));
    return state;
  }
  source.prefetch?.(plan.emitIds);
  for (const id of plan.emitIds) {
    const entry = source.getEntry(id);
    if (entry) emit(state, entry);
  }
  return state;
}

function toContext(state: LeafState): SessionContext {
  const { messages, diagnostics } = state.pairing.snapshot();
  return {
    leafId: state.leafId,
    messages,
    thinkingLevel: state.thinkingLevel,
    model: state.model ? { ...state.model } : null,
    activeToolNames: state.activeToolNames ? [...state.activeToolNames] : null,
    diagnostics: [...state.diagnostics, ...diagnostics],
  };
}

/** Builds contexts with a small per-leaf cache (see the module contract). */
export interface ContextBuilder {
  /** The context at `leafId` (`null` = empty). Throws `EntryNotFoundError` for an unknown id. */
  build(leafId: string | null): SessionContext;
  /** Tell the builder an entry was added (invalidates caches that saw it as a missing parent). */
  entryAdded(entry: SessionEntry): void;
  /** Drops every cached leaf and seeded plan. */
  clear(): void;
  /** The plan of a full build at `leafId` (walks the path; reads only the compaction). Throws `EntryNotFoundError`. */
  plan(leafId: string): ContextPlan;
  /** Seeds a stored plan: the next build at `plan.leafId` executes it instead of walking the path. */
  seed(plan: ContextPlan): void;
  /** Counters for tests and benchmarks: full builds (of which from a seeded plan) and one-entry extensions. */
  readonly stats: { fullBuilds: number; seededBuilds: number; extensions: number };
}

/** Options of {@link createContextBuilder}. */
export interface ContextBuilderOptions {
  /** Leaves kept in the cache (default 8). */
  cacheSize?: number;
}

/** Creates a context builder over an entry source (see the module contract). */
export function createContextBuilder(source: EntrySource, options: ContextBuilderOptions = {}): ContextBuilder {
  const cacheSize = Math.max(1, options.cacheSize ?? 8);
  const cache = new Map<string, LeafState>();
  const watchedMissing = new Set<string>();
  const plans = new Map<string, ContextPlan>();
  const stats = { fullBuilds: 0, seededBuilds: 0, extensions: 0 };
  const notFound = (leafId: string) => new EntryNotFoundError(`No entry "${leafId}" in this session; cannot build its context.`, { details: { leafId } });

  const remember = (state: LeafState) => {
    cache.delete(state.leafId);
    cache.set(state.leafId, state);
    while (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  };

  /**
   * The state at `entry` made by extending a cached (or seeded) ancestor at most {@link MAX_EXTENSION} entries up by the entries between them, or
   * undefined (then a full build runs). A compaction or `context_edit` on the way, a missing parent or a cycle stop it.
   */
  const extendCachedAncestor = (entry: SessionEntry): LeafState | undefined => {
    const chain: SessionEntry[] = [entry];
    const look = source.peek ?? source.getEntry;
    let current = entry;
    let ancestor: LeafState | undefined;
    while (chain.length <= MAX_EXTENSION) {
      if (current.type === "compaction" || current.type === "context_edit") return undefined;
      const parentId = current.parentId && current.parentId !== current.id ? current.parentId : undefined;
      if (!parentId) return undefined;
      if (!cache.has(parentId) && plans.has(parentId)) stateFor(parentId);
      ancestor = cache.get(parentId);
      if (ancestor) break;
      const parent = look(parentId);
      if (!parent || chain.some((link) => link.id === parent.id)) return undefined;
      chain.push(parent);
      current = parent;
    }
    if (!ancestor) return undefined;
    // Extend the ancestor's state root-side first; the ancestor leaves the cache (its state is reused).
    cache.delete(ancestor.leafId);
    for (let index = chain.length - 1; index >= 0; index--) {
      const link = index === 0 ? entry : (source.getEntry(chain[index].id) ?? chain[index]);
      ancestor.leafId = link.id;
      applySettings(ancestor, link);
      emit(ancestor, link);
      stats.extensions += 1;
    }
    remember(ancestor);
    return ancestor;
  };

  const stateFor = (leafId: string): LeafState => {
    const cached = cache.get(leafId);
    if (cached) return cached;
    const seeded = plans.get(leafId);
    if (seeded) {
      plans.delete(leafId);
      const state = executePlan(source, seeded);
      stats.fullBuilds += 1;
      stats.seededBuilds += 1;
      remember(state);
      return state;
    }
    const entry = source.getEntry(leafId);
    if (!entry) throw notFound(leafId);
    const extended = cache.size > 0 || plans.size > 0 ? extendCachedAncestor(entry) : undefined;
    if (extended) return extended;
    const emitting = source.planEmitting?.(leafId);
    const plan = emitting?.plan ?? source.plan?.(leafId) ?? planFull(source, leafId);
    for (const id of plan.missingParents) watchedMissing.add(id);
    const state = executePlan(source, plan, emitting);
    stats.fullBuilds += 1;
    remember(state);
    return state;
  };

  return {
    stats,
    build(leafId) {
      if (leafId === null) {
        return { leafId: null, messages: [], thinkingLevel: "off", model: null, activeToolNames: null, diagnostics: [] };
      }
      return toContext(stateFor(leafId));
    },
    entryAdded(entry) {
      if (watchedMissing.has(entry.id)) {
        watchedMissing.clear();
        cache.clear();
        plans.clear();
      }
    },
    clear() {
      cache.clear();
      plans.clear();
      watchedMissing.clear();
    },
    plan(leafId) {
      if (!(source.peek ? source.peek(leafId) : source.getEntry(leafId))) throw notFound(leafId);
      return planFull(source, leafId);
    },
    seed(plan) {
      plans.set(plan.leafId, plan);
      for (const id of plan.missingParents) watchedMissing.add(id);
    },
  };
}

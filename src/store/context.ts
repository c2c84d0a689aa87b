/**
 * The context projection: the messages, thinking level, model and active tools
 * the model sees at one leaf of a session tree.
 *
 * Contract (semantics pi's `buildSessionContext`, `docs/pi-parity.md`; ours where marked):
 * - the path is root→leaf by `parentId`; `leafId: null` gives an empty context;
 * - `thinkingLevel` = last `thinking_level_change` on the path (default `"off"`);
 *   `model` = last of `model_change` {provider, modelId} or assistant message {provider, model}
 *   on the path (pi's rule: a later assistant overrides an earlier model_change and vice versa);
 *   `activeToolNames` (ours) = last `active_tools_change`, `null` = all tools;
 * - the LAST compaction on the path gives a `compactionSummary` first, then the path entries
 *   before it starting at its `firstKeptEntryId` (none if that id is not on the path), then
 *   every entry after it;
 * - emitted: `message` (its message), `custom_message` (as a `custom` message, timestamp = the
 *   entry's ISO time in ms), `branch_summary` with a non-empty summary (as `branchSummary`);
 *   nothing else (unknown kinds are reported as `unknown_entry` diagnostics); pi 1.x's
 *   `role: "system"` messages are never emitted (pi 0.73.1 emits them and its `convertToLlm`
 *   drops them; Arbor's harness owns the system prompt);
 * - pi 1.x's `context_edit` entries on the path apply to the emitted entries: the latest edit
 *   per `targetId` on the path wins; `replacement: null` omits the target, a message replaces
 *   its message, anything else leaves it as it is with a `context_edit_unapplied` diagnostic.
 *   Edits on other branches do not count (branch-relative, as pi 1.x describes);
 * - the tool-pairing invariant (`pairing.ts`) is applied to every context;
 * - ours, where pi would hang or guess: a `parentId` cycle stops the walk (`parent_cycle`), a
 *   missing parent stops it (`missing_parent`, pi stops silently); an unknown `leafId` throws
 *   `EntryNotFoundError` (pi silently falls back to the last entry);
 * - incremental: the context of a leaf is cached; when asked for an entry whose parent, or an
 *   ancestor at most 64 entries up, is a cached leaf, the cached state is extended by the entries
 *   in between (O(those entries) plus one array copy) instead of re-walking the path (an ordinary
 *   turn appends several entries before the next build). A compaction or `context_edit` entry
 *   among them triggers a full rebuild;
 * - a full build is a plan (a path walk on stubs, ids only) then its execution; a plan stored
 *   with a snapshot can be `seed`ed so the first build after opening needs no path walk.
 *
 * @example
 * ```ts
 * const builder = createContextBuilder({ getEntry: (id) => entries.get(id) });
 * const context = builder.build("a1b2c3d4");
 * ```
 */
import { EntryNotFoundError } from "../core/errors.ts";
import type { CompactionEntry, SessionEntry } from "../core/entries.ts";
import { isKnownEntry } from "../core/entries.ts";
import type { AgentMessage, ThinkingLevel } from "../core/messages.ts";
import { roleOf } from "./lazy-entries.ts";
import { createPairing, type Pairing } from "./pairing.ts";
import type { ContextDiagnostic, SessionContext } from "./session-types.ts";

/** Read access to a session's entries by id. */
export interface EntrySource {
  /** The full entry. */
  getEntry(id: string): SessionEntry | undefined;
  /**
   * Optional cheap look-up that may return a stub (id, parentId, type, timestamp, role) of an
   * entry not read yet (see `lazy-entries.ts`); used to walk paths without reading content.
   */
  peek?(id: string): SessionEntry | undefined;
  /** Optional hint: these entries are about to be read (lets a lazy source read them in bulk). */
  prefetch?(ids: readonly string[]): void;
  /** Optional: the number of entries; lets the path walk skip per-step cycle bookkeeping. */
  size?(): number;
  /**
   * Optional: the plan of a full build at `leafId` found without walking the path (the session
   * index, `index-plan.ts`), its entries made cheap to read; undefined: walk the path as usual.
   */
  plan?(leafId: string): ContextPlan | undefined;
  /**
   * Optional: a full build's plan at `leafId` whose emitted messages the source delivers itself
   * (ours: the stored context text of the session index, `context-chunks.ts`), tried
   * before `plan`; undefined: `plan`, then a path walk.
   */
  planEmitting?(leafId: string): EmittingPlan | undefined;
}

/** A full build's plan plus its emitted messages, delivered by the source (see {@link EntrySource.planEmitting}). */
export interface EmittingPlan {
  /** The plan; its `emitIds` are not read. */
  plan: ContextPlan;
  /**
   * Calls `visit` with the id and message of every entry the plan emits, in emission order
   * (what {@link entryToMessage} gives for each, entries that give nothing skipped).
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
 * Walks `parentId` links from `leafId` to the root and returns the path root first.
 * Stops at a missing parent or a cycle and reports it; never throws, never loops.
 *
 * @example
 * ```ts
 * const { path } = pathToRoot(source, "a1b2c3d4");
 * ```
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
 * The context message an entry contributes, if any (pi's `appendMessage`): `message` → its
 * message, `custom_message` → a `custom` message (timestamp in ms from the entry's ISO time),
 * `branch_summary` with a non-empty summary → `branchSummary`; anything else → undefined.
 *
 * @example
 * ```ts
 * entryToMessage({ type: "custom_message", id: "x", parentId: null, timestamp: "2026-01-01T00:00:00Z", customType: "n", content: "hi", display: true });
 * ```
 */
export function entryToMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message": {
      const message = (entry as { message: AgentMessage }).message;
      return message.role === "system" ? undefined : message;
    }
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

function isMessage(value: unknown): value is AgentMessage {
  return typeof value === "object" && value !== null && typeof (value as { role?: unknown }).role === "string" && (value as { role: string }).role !== "system";
}

function emit(state: LeafState, entry: SessionEntry): void {
  const message = entryToMessage(entry);
  if (message) emitMessage(state, entry.id, message);
}

/** Adds the message entry `entryId` contributes, after its `context_edit` (if any). */
function emitMessage(state: LeafState, entryId: string, message: AgentMessage): void {
  if (state.edits.size > 0 && state.edits.has(entryId)) {
    const replacement = state.edits.get(entryId);
    if (replacement === null) return;
    if (isMessage(replacement)) {
      state.pairing.push(replacement, entryId);
      return;
    }
    state.diagnostics.push({
      kind: "context_edit_unapplied",
      message: `A context_edit of entry ${entryId} has a replacement that is not a message; the entry is sent unchanged.`,
      entryId,
    });
  }
  state.pairing.push(message, entryId);
}

function addEdit(state: LeafState, entry: SessionEntry): void {
  const edit = entry as { targetId?: unknown; replacement?: unknown };
  if (typeof edit.targetId === "string") state.edits.set(edit.targetId, edit.replacement);
}

/**
 * What a full build needs, found by walking the path on cheap look-ups: ids only, so it can be
 * stored with a snapshot and executed later without walking the path again.
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
  /** `context_edit` entries on the path, in path order (absent in plans stored before pi 1.x support). */
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
  const editIds: string[] = [];
  path.forEach((entry, index) => {
    switch (entry.type) {
      case "context_edit":
        editIds.push(entry.id);
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
  const emitFrom = (from: number, to: number, into: string[]) => {
    for (let index = from; index < to; index++) if (EMITTING.has(path[index].type)) into.push(path[index].id);
  };
  const emitIds: string[] = [];
  if (compactionIndex < 0) {
    emitFrom(0, path.length, emitIds);
  } else {
    const compaction = (source.getEntry(path[compactionIndex].id) ?? path[compactionIndex]) as CompactionEntry;
    const firstKept = path.findIndex((entry, index) => index < compactionIndex && entry.id === compaction.firstKeptEntryId);
    if (firstKept >= 0) emitFrom(firstKept, compactionIndex, emitIds);
    emitFrom(compactionIndex + 1, path.length, emitIds);
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
    if (compaction) {
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

/**
 * Creates a context builder over an entry source (see the module contract).
 *
 * @example
 * ```ts
 * const builder = createContextBuilder(view);
 * builder.build(view.leafId).messages;
 * ```
 */
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
   * The state at `entry` made by extending a cached (or seeded) ancestor at most
   * {@link MAX_EXTENSION} entries up by the entries between them, or undefined (then a full
   * build runs). A compaction or `context_edit` on the way, a missing parent or a cycle stop it.
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

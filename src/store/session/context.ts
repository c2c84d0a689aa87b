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
import type { SessionEntry } from "../../core/entries.ts";
import { planFull, type ContextPlan, type EntrySource } from "./context-plan.ts";
import { applySettings, emit, executePlan, toContext, type LeafState } from "./context-state.ts";
import type { SessionContext } from "../session-types.ts";

export { pathToRoot, type ContextPlan, type EmittingPlan, type EntrySource } from "./context-plan.ts";
export { entryToMessage } from "./context-state.ts";

/** How many entries back a build looks for a cached leaf to extend (an ordinary turn appends a few). */
const MAX_EXTENSION = 64;

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

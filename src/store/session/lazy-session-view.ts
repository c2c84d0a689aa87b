/**
 * A session view opened from the session index (ours; the {@link SessionView} contract, same results as a folded view): it starts from a stored head
 * and reads entries only when asked, so opening a session and building its context cost O(that context). Contexts are planned from the index
 * (`index-plan.ts`) while it covers the view's version, else walked (`context.ts`); whole-tree operations fold the stream once into an ordinary view
 * and delegate to it.
 */
import type { Observable } from "rxjs";
import { subject } from "../../core/rx.ts";
import type { SessionEntry } from "../../core/entries.ts";
import { InvalidStateError } from "../../core/errors.ts";
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import { sessionStreamId } from "../events/session-events.ts";
import { createContextBuilder, pathToRoot, type ContextPlan, type EmittingPlan } from "./context.ts";
import { emitStoredContext } from "./context-chunks.ts";
import { emittingRows, pathRuns, planFromIndex } from "./index-plan.ts";
import { foldActivity, type SessionActivity } from "./session-activity.ts";
import { createGapCheck } from "./version-gaps.ts";
import type { IndexedEntry, SessionIndex } from "./session-index.ts";
import { createStatsAccumulator } from "./session-stats.ts";
import { foldEntryFacts, type EntryFacts, type SessionTreeContext, treeScalarsOf, type TreeScalars } from "./session-tree.ts";
import { createSessionView, type SessionViewInternals } from "./session-view.ts";

/** The folded state a session head stores (JSON), at {@link StoredHead.version}. */
export type SessionHeadState = TreeScalars & {
  activity: SessionActivity;
};

/** The head state of a folded tree (no entry is read). */
export function headOfTree(context: SessionTreeContext): SessionHeadState | undefined {
  if (!context.info) return undefined;
  return { ...treeScalarsOf(context, context.info), activity: context.activity };
}

/** A lazy view: the session view internals plus its head state (for the next head write). */
export interface LazySessionView extends SessionViewInternals {
  headState(): SessionHeadState;
  /** True once a whole-tree operation folded the stream (tests). */
  readonly inflated: boolean;
}

/** Options of {@link createLazySessionView}. */
export interface LazySessionViewOptions {
  sessionId: string;
  index: SessionIndex;
  /** The head's version. */
  version: number;
  state: SessionHeadState;
}

function timeOf(entry: SessionEntry): number {
  const time = Date.parse(entry.timestamp);
  return Number.isNaN(time) ? 0 : time;
}

/** Creates a view from a session head (see the module contract). */
export function createLazySessionView(options: LazySessionViewOptions): LazySessionView {
  const { sessionId, index } = options;
  const streamId = sessionStreamId(sessionId);
  const state = options.state;
  let version = options.version;
  let leafId = state.leafId;
  let activity = state.activity;
  const facts: EntryFacts = {
    name: state.name,
    messageCount: state.messageCount,
    firstUserMessage: state.firstUserMessage,
    lastActivity: state.lastActivity,
    labels: new Map(state.labels),
    stats: createStatsAccumulator(state.stats),
  };
  /** Entries read or folded so far, by id. */
  const known = new Map<string, SessionEntry>();
  /** Entries folded since opening, in append order. */
  const folded: SessionEntry[] = [];
  const foldedIds = new Set<string>();
  let inflatedView: SessionViewInternals | undefined;
  const changes = subject<SessionViewInternals>();

  /** The index status when it covers this view's version and the stream is clean, else undefined. */
  const covered = () => {
    const status = index.ensure(streamId);
    return status && status.unusual === 0 && status.indexedVersion >= version ? status : undefined;
  };
  let openStatus = covered();
  /** Entries indexed when the view opened: rows past it were folded here (and are in `folded`). */
  const entriesAtOpen = openStatus?.entries ?? 0;

  const remember = (rows: readonly IndexedEntry[]) => {
    const missing = rows.filter((row) => !known.has(row.id));
    if (missing.length === 0) return;
    index.entries(streamId, missing).forEach((entry, position) => {
      if (entry) known.set(missing[position].id, entry);
    });
  };
  const getEntry = (id: string): SessionEntry | undefined => {
    const cached = known.get(id);
    if (cached) return cached;
    const row = index.byId(streamId, id);
    if (!row || row.seq >= entriesAtOpen) return undefined;
    remember([row]);
    return known.get(id);
  };
  /** The plan from the index with its few non-emitted entries (settings, edits, compaction) read, and the ranges it emits. */
  const indexPlan = (at: string) => {
    const status = covered();
    if (!status) return undefined;
    const found = planFromIndex(index, streamId, at, status.entries, status.unknown > 0);
    if (!found) return undefined;
    const needed: IndexedEntry[] = [];
    for (const id of [...found.plan.settingIds, ...(found.plan.editIds ?? []), ...(found.plan.compactionId ? [found.plan.compactionId] : [])]) {
      const row = index.byId(streamId, id);
      if (row) needed.push(row);
    }
    return { found, needed };
  };
  /** Without stored context text: every emitted entry read through the index (in one range read per stretch). */
  const planAt = (at: string): ContextPlan | undefined => {
    const planned = indexPlan(at);
    if (!planned) return undefined;
    const { emitRanges, keptRanges } = planned.found;
    // A compaction's kept range emits no system messages (pi 1.6 folds them into its checkpoint).
    const emitRows = emittingRows(index, streamId, emitRanges.slice(0, keptRanges))
      .filter((row) => row.role !== "system")
      .concat(emittingRows(index, streamId, emitRanges.slice(keptRanges)));
    const needed = emitRows.concat(planned.needed).sort((a, b) => a.seq - b.seq);
    remember(needed);
    return { ...planned.found.plan, emitIds: emitRows.map((row) => row.id) };
  };
  /** With stored context text: the emitted messages come from its chunks (`context-chunks.ts`), entries are not kept. */
  const planEmitting = (at: string): EmittingPlan | undefined => {
    const planned = indexPlan(at);
    if (!planned) return undefined;
    remember(planned.needed.sort((a, b) => a.seq - b.seq));
    const { plan, emitRanges, keptRanges } = planned.found;
    return {
      plan,
      forEachEmitted: (visit) => {
        emitStoredContext(index, streamId, emitRanges.slice(0, keptRanges), (id, message) => {
          if (message.role !== "system") visit(id, message);
        });
        emitStoredContext(index, streamId, emitRanges.slice(keptRanges), visit);
      },
    };
  };
  const contexts = createContextBuilder({ getEntry, ...(index.contextChunks ? { planEmitting } : { plan: planAt }), size: () => entriesAtOpen + folded.length });

  const inflate = (): SessionViewInternals => {
    if (inflatedView) return inflatedView;
    const full = createSessionView(sessionId);
    full.applyAll(index.readStream(streamId, 1).filter((event) => event.version <= version));
    inflatedView = full;
    openStatus = undefined;
    return full;
  };

  const fold = (event: StoredEvent) => {
    if (isEventOfType(event, "entry.appended")) {
      const entry = event.data.entry;
      known.set(entry.id, entry);
      folded.push(entry);
      foldedIds.add(entry.id);
      foldEntryFacts(facts, entry);
      leafId = entry.id;
      contexts.entryAdded(entry);
    } else if (isEventOfType(event, "leaf.moved")) {
      leafId = event.data.leafId;
    }
    activity = foldActivity(activity, event);
    version = event.version;
  };
  /** The events to fold (lower versions are already folded; a gap throws, nothing folded, unless a message is open: `version-gaps.ts`). */
  const fresh = (events: readonly StoredEvent[]): StoredEvent[] => {
    let expected = version + 1;
    const gaps = createGapCheck(activity);
    const out: StoredEvent[] = [];
    for (const event of events) {
      if (event.version < expected) continue;
      if (event.version !== expected && !gaps.allows()) {
        throw new InvalidStateError(`Session stream event version ${event.version} does not follow version ${expected - 1}; events must be applied in order.`, {
          details: { streamId: event.streamId, version: event.version, expected },
        });
      }
      out.push(event);
      gaps.fold(event);
      expected = event.version + 1;
    }
    return out;
  };

  const view: LazySessionView = {
    sessionId,
    get tree() {
      return inflate().tree;
    },
    get contexts() {
      return inflatedView ? inflatedView.contexts : contexts;
    },
    get inflated() {
      return inflatedView !== undefined;
    },
    get info() {
      return state.info;
    },
    get version() {
      return inflatedView ? inflatedView.version : version;
    },
    get leafId() {
      return inflatedView ? inflatedView.leafId : leafId;
    },
    get name() {
      return inflatedView ? inflatedView.name : facts.name;
    },
    get activity() {
      return inflatedView ? inflatedView.activity : activity;
    },
    get changes$(): Observable<SessionViewInternals> {
      return changes.asObservable();
    },
    apply(event) {
      view.applyAll([event]);
    },
    applyAll(events) {
      if (inflatedView) {
        const before = inflatedView.version;
        inflatedView.applyAll(events);
        if (inflatedView.version !== before) changes.next(view);
        return;
      }
      const next = fresh(events);
      if (next.length === 0) return;
      for (const event of next) fold(event);
      changes.next(view);
    },
    restore() {
      throw new InvalidStateError("A session view opened from the session index cannot restore a snapshot.");
    },
    getEntry(id) {
      return inflatedView ? inflatedView.getEntry(id) : getEntry(id);
    },
    getChildren(id) {
      if (inflatedView) return inflatedView.getChildren(id);
      const before = index.children(streamId, id).filter((row) => row.seq < entriesAtOpen && row.id !== id && !foldedIds.has(row.id));
      remember(before);
      const children = [...before.map((row) => known.get(row.id)!), ...folded.filter((entry) => entry.parentId === id && entry.id !== id)];
      return children.map((entry, order) => ({ entry, order, time: timeOf(entry) })).sort((a, b) => a.time - b.time || a.order - b.order).map(({ entry }) => entry);
    },
    getBranch(fromId) {
      if (inflatedView) return inflatedView.getBranch(fromId);
      const start = fromId === undefined ? leafId : fromId;
      if (start === null || !getEntry(start)) return [];
      const status = covered();
      const row = status ? index.byId(streamId, start) : undefined;
      const runs = status && row ? pathRuns(index, streamId, row, status.entries) : undefined;
      if (!runs) return pathToRoot({ getEntry }, start).path;
      const rows = runs.flatMap((run) => index.inRange(streamId, run.from, run.to));
      remember(rows);
      return rows.map((item) => known.get(item.id)!);
    },
    getTree() {
      return inflate().getTree();
    },
    getEntries() {
      return inflate().getEntries();
    },
    getLabel(entryId) {
      return inflatedView ? inflatedView.getLabel(entryId) : facts.labels.get(entryId);
    },
    getStats() {
      return inflatedView ? inflatedView.getStats() : facts.stats.snapshot();
    },
    buildContext(buildOptions = {}) {
      if (inflatedView) return inflatedView.buildContext(buildOptions);
      const at = buildOptions.leafId === undefined ? leafId : buildOptions.leafId;
      return contexts.build(at);
    },
    headState() {
      if (inflatedView) return headOfTree(inflatedView.tree.state)!;
      return {
        info: state.info,
        leafId,
        name: facts.name,
        messageCount: facts.messageCount,
        firstUserMessage: facts.firstUserMessage,
        lastActivity: facts.lastActivity,
        labels: [...facts.labels],
        stats: facts.stats.snapshot(),
        activity,
      };
    },
    dispose() {
      inflatedView?.dispose();
      changes.complete();
    },
  };
  return view;
}

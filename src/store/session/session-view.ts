/**
 * The in-memory projection of one session behind the {@link SessionView} contract: the tree (`session-tree.ts`) plus the context builder
 * (`context.ts`), folded from the stream's stored events (`changes$` emits after each applied one). `getBranch` stops silently at a missing parent
 * or a cycle, as pi's; orphans are roots in `getTree`; `buildContext()` defaults to the leaf and caches per leaf; a restored view reads stubs on
 * first use (`lazy-entries.ts`).
 */
import type { Observable } from "rxjs";
import { subject, type Subject } from "../../core/rx.ts";
import type { SessionEntry } from "../../core/entries.ts";
import { InvalidStateError } from "../../core/errors.ts";
import type { StoredEvent } from "../event-log.ts";
import type { SessionCreatedData } from "../events/session-events.ts";
import { createContextBuilder, pathToRoot, type ContextBuilder } from "./context.ts";
import { isStub, materialize, materializeAll, materializeMany, type EntryLoader } from "./lazy-entries.ts";
import { childrenIndex, createSessionTree, type SessionTree, type TreeSnapshot } from "./session-tree.ts";
import type { SessionContext, SessionStats, SessionTreeNode, SessionView } from "../session-types.ts";

/** From this many stubs to read, a context build reads them in one query (all of them when they are most of the session). */
const BULK_READ_THRESHOLD = 32;

/** A {@link SessionView} with access to its store and context builder (for tests and benchmarks). */
export interface SessionViewInternals extends SessionView {
  readonly tree: SessionTree;
  readonly contexts: ContextBuilder;
  /** Starts an empty view from a projection snapshot (entries are read lazily through `loader`). */
  restore(snapshot: TreeSnapshot, loader: EntryLoader): void;
  /** Folds many stored events in one store transition (catch-up); `changes$` emits once. Throws `InvalidStateError` on a gap. */
  applyAll(events: readonly StoredEvent[]): void;
  /** Stops `changes$`. */
  dispose(): void;
}

/**
 * Creates an empty view of session `sessionId`; feed it the stream's events with `apply`. `info` throws `InvalidStateError` until `session.created`
 * was applied.
 */
export function createSessionView(sessionId: string): SessionViewInternals {
  const tree = createSessionTree();
  // The index object is replaced when a snapshot is restored: always read it from the tree.
  const indexOf = () => tree.state.index;
  const full = (id: string) => {
    const index = indexOf();
    return materialize(index, index.byId.get(id));
  };
  // The context builder and the changes subject are created on first use (an idle view holds neither).
  let contextBuilder: ContextBuilder | undefined;
  const contexts = (): ContextBuilder => (contextBuilder ??= createContextBuilder({
    getEntry: full,
    peek: (id) => indexOf().byId.get(id),
    prefetch(ids) {
      // Many stubs to read: one bulk read beats one query per entry.
      const index = indexOf();
      if (index.stubCount === 0 || ids.length < BULK_READ_THRESHOLD) return;
      const stubs: SessionEntry[] = [];
      for (const id of ids) {
        const entry = index.byId.get(id);
        if (entry && isStub(entry)) stubs.push(entry);
      }
      if (stubs.length < BULK_READ_THRESHOLD) return;
      if (stubs.length * 2 >= index.stubCount) materializeAll(index);
      else materializeMany(index, stubs);
    },
    size: () => indexOf().byId.size,
  }));
  let changes: Subject<SessionView> | undefined;
  let disposed = false;
  const changesNow = (): Subject<SessionView> => {
    if (changes) return changes;
    changes = subject<SessionView>();
    if (disposed) changes.complete();
    return changes;
  };

  const view: SessionViewInternals = {
    sessionId,
    tree,
    get contexts() {
      return contexts();
    },
    get info(): SessionCreatedData {
      const info = tree.state.info;
      if (!info) throw new InvalidStateError(`Session ${sessionId} has no session.created event (yet).`);
      return info;
    },
    get version() {
      return tree.state.version;
    },
    get leafId() {
      return tree.state.leafId;
    },
    get name() {
      return tree.state.name;
    },
    get activity() {
      return tree.state.activity;
    },
    get changes$(): Observable<SessionView> {
      return changesNow().asObservable();
    },
    apply(event: StoredEvent) {
      const { applied, entry } = tree.apply(event);
      if (!applied) return;
      if (entry) contextBuilder?.entryAdded(entry);
      changes?.next(view);
    },
    restore(snapshot: TreeSnapshot, loader: EntryLoader) {
      tree.restore(snapshot, loader);
      contextBuilder?.clear();
      if (snapshot.contextPlan) contexts().seed(snapshot.contextPlan);
    },
    applyAll(events: readonly StoredEvent[]) {
      const before = tree.state.version;
      const entries = tree.applyAll(events);
      if (contextBuilder) for (const entry of entries) contextBuilder.entryAdded(entry);
      if (tree.state.version !== before) changes?.next(view);
    },
    getEntry(id) {
      return full(id);
    },
    getChildren(id) {
      const index = indexOf();
      return (childrenIndex(index).get(id) ?? []).filter((child) => child.id !== id).map((child) => materialize(index, child));
    },
    getBranch(fromId) {
      const start = fromId === undefined ? tree.state.leafId : fromId;
      if (start === null || !indexOf().byId.has(start)) return [];
      return pathToRoot({ getEntry: full }, start).path;
    },
    getTree() {
      const index = indexOf();
      materializeAll(index);
      return buildTree(index.order, childrenIndex(index), index.byId, index.labels);
    },
    getEntries() {
      const index = indexOf();
      materializeAll(index);
      return [...index.order];
    },
    getLabel(entryId) {
      return indexOf().labels.get(entryId);
    },
    getStats(): SessionStats {
      return indexOf().stats.snapshot();
    },
    buildContext(options = {}): SessionContext {
      const leafId = options.leafId === undefined ? tree.state.leafId : options.leafId;
      return contexts().build(leafId);
    },
    dispose() {
      disposed = true;
      changes?.complete();
    },
  };
  return view;
}

function buildTree(
  order: readonly SessionEntry[],
  children: Map<string | null, SessionEntry[]>,
  byId: Map<string, SessionEntry>,
  labels: Map<string, string>,
): SessionTreeNode[] {
  const nodes = new Map<string, SessionTreeNode>();
  const nodeOf = (entry: SessionEntry): SessionTreeNode => {
    let node = nodes.get(entry.id);
    if (!node) {
      node = { entry, children: [] };
      const label = labels.get(entry.id);
      if (label !== undefined) node.label = label;
      nodes.set(entry.id, node);
    }
    return node;
  };
  // Roots: entries without parent, self-parented, or whose parent is missing; ordered by time then append order.
  const roots = order.filter((entry) => entry.parentId === null || entry.parentId === entry.id || !byId.has(entry.parentId));
  roots.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || 0);
  const rootNodes = roots.map(nodeOf);
  const stack = [...rootNodes];
  const visited = new Set<string>();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (visited.has(node.entry.id)) continue;
    visited.add(node.entry.id);
    for (const child of children.get(node.entry.id) ?? []) {
      if (child.id === node.entry.id || visited.has(child.id)) continue;
      const childNode = nodeOf(child);
      node.children.push(childNode);
      stack.push(childNode);
    }
  }
  return rootNodes;
}

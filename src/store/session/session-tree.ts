/**
 * The tree projection of one session stream (tree semantics pi's, `docs/pi-parity.md`), an `@xstate/store` store fed one stored event at a time by
 * `foldStoredInto`, which also folds `activity` (`session-activity.ts`). Events come in stream order: a lower version is ignored, a skip throws
 * `InvalidStateError` unless a message is open (`version-gaps.ts`). The index is append-only and mutated in place (O(1) folds at 100,000 entries);
 * children are ordered by timestamp like pi's getTree; the latest label and `session_info` name win, empty clears; `restore` starts from a
 * {@link TreeSnapshot} with lazy entries.
 */
import { createStore } from "@xstate/store";
import type { SessionEntry } from "../../core/entries.ts";
import { InvalidStateError } from "../../core/errors.ts";
import type { AgentMessage } from "../../core/messages.ts";
import type { ContextPlan } from "./context.ts";
import type { StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import { emptyActivity, foldActivity, type SessionActivity } from "./session-activity.ts";
import { createGapCheck } from "./version-gaps.ts";
import type { SessionCreatedData } from "../events/session-events.ts";
import { roleOf, STUB_SEQ, type EntryLoader, type EntryStub } from "./lazy-entries.ts";
import { createStatsAccumulator, type StatsAccumulator } from "./session-stats.ts";
import type { SessionStats } from "../session-types.ts";

/** Mutable, append-only indexes of a session's entries. */
export interface TreeIndex {
  byId: Map<string, SessionEntry>;
  /** Append order. */
  order: SessionEntry[];
  /**
   * parentId → children, by timestamp then append order; roots under `null`. Built on first use (`childrenIndex`) and then kept up to date;
   * `undefined` until then, so folds and restores that never list children do not pay for it.
   */
  children: Map<string | null, SessionEntry[]> | undefined;
  labels: Map<string, string>;
  stats: StatsAccumulator;
  /** Reads stubbed entries (sessions restored from a snapshot). */
  loader?: EntryLoader;
  /** Entries still stubbed. */
  stubCount: number;
}

/** The tree's state in a storable form: scalars plus a skeleton of every entry (no content). */
export interface TreeSnapshot {
  version: number;
  info: SessionCreatedData;
  leafId: string | null;
  name: string | undefined;
  messageCount: number;
  firstUserMessage: string | undefined;
  lastActivity: number | undefined;
  labels: [string, string][];
  stats: SessionStats;
  skeleton: { ids: string[]; parents: (string | null)[]; types: string[]; roles: (string | null)[]; timestamps: string[] };
  /** The context plan of the leaf when the snapshot was taken (lets the first build skip the path walk). */
  contextPlan?: ContextPlan;
  /** The activity projection at `version` (runs, queues, approvals, summaries; `session-activity.ts`). Missing in snapshots written before it existed: those are not used. */
  activity: SessionActivity;
}

/** The store's context: scalar facts plus the shared index. */
export interface SessionTreeContext {
  version: number;
  info: SessionCreatedData | undefined;
  leafId: string | null;
  name: string | undefined;
  entryCount: number;
  messageCount: number;
  /** Text of the first user message, or undefined. */
  firstUserMessage: string | undefined;
  /** Latest user/assistant message time (epoch ms), or undefined. */
  lastActivity: number | undefined;
  index: TreeIndex;
  /** Runs, queues, approvals and summary intents, folded by {@link foldActivity} from the same events. */
  activity: SessionActivity;
}

function timeOf(entry: SessionEntry): number {
  const time = Date.parse(entry.timestamp);
  return Number.isNaN(time) ? 0 : time;
}

function insertChild(list: SessionEntry[], entry: SessionEntry): void {
  if (list.length === 0) {
    list.push(entry);
    return;
  }
  const time = timeOf(entry);
  let position = list.length;
  while (position > 0 && timeOf(list[position - 1]) > time) position -= 1;
  list.splice(position, 0, entry);
}

function addChild(children: Map<string | null, SessionEntry[]>, entry: SessionEntry): void {
  const parentKey = entry.parentId === null || entry.parentId === entry.id ? null : entry.parentId;
  let siblings = children.get(parentKey);
  if (!siblings) children.set(parentKey, (siblings = []));
  insertChild(siblings, entry);
}

function addToIndex(index: TreeIndex, entry: SessionEntry): void {
  if (!index.byId.has(entry.id)) index.order.push(entry);
  index.byId.set(entry.id, entry);
  if (index.children) addChild(index.children, entry);
}

/** The children index of `index`, built from the append order on first use (the same order an incremental build gives). */
export function childrenIndex(index: TreeIndex): Map<string | null, SessionEntry[]> {
  if (!index.children) {
    const children = new Map<string | null, SessionEntry[]>();
    for (const entry of index.order) addChild(children, entry);
    index.children = children;
  }
  return index.children;
}

function emptyIndex(stats?: SessionStats): TreeIndex {
  return { byId: new Map(), order: [], children: undefined, labels: new Map(), stats: createStatsAccumulator(stats), stubCount: 0 };
}

function restoreContext(snapshot: TreeSnapshot, loader: EntryLoader): SessionTreeContext {
  const index = emptyIndex(snapshot.stats);
  index.loader = loader;
  const { ids, parents, types, roles, timestamps } = snapshot.skeleton;
  for (let seq = 0; seq < ids.length; seq++) {
    const stub = { type: types[seq], id: ids[seq], parentId: parents[seq], timestamp: timestamps[seq], [STUB_SEQ]: seq } as EntryStub;
    if (roles[seq] !== null) stub.role = roles[seq] as string;
    addToIndex(index, stub);
  }
  index.stubCount = index.order.length;
  for (const [target, label] of snapshot.labels) index.labels.set(target, label);
  return {
    version: snapshot.version,
    info: snapshot.info,
    leafId: snapshot.leafId,
    name: snapshot.name,
    entryCount: index.order.length,
    messageCount: snapshot.messageCount,
    firstUserMessage: snapshot.firstUserMessage,
    lastActivity: snapshot.lastActivity,
    index,
    activity: snapshot.activity,
  };
}

/** The scalar part of a tree's state that both a snapshot and a session head store. */
export type TreeScalars = Pick<TreeSnapshot, "info" | "leafId" | "name" | "messageCount" | "firstUserMessage" | "lastActivity" | "labels" | "stats">;

/** The scalars of `context` (labels and stats copied), with `info` already checked present. */
export function treeScalarsOf(context: SessionTreeContext, info: SessionCreatedData): TreeScalars {
  return {
    info,
    leafId: context.leafId,
    name: context.name,
    messageCount: context.messageCount,
    firstUserMessage: context.firstUserMessage,
    lastActivity: context.lastActivity,
    labels: [...context.index.labels],
    stats: context.index.stats.snapshot(),
  };
}

/** The storable form of a tree context (no entry content is read). Throws `InvalidStateError` before `session.created`. */
export function snapshotOf(context: SessionTreeContext): TreeSnapshot {
  if (!context.info) throw new InvalidStateError("Cannot snapshot a session without its session.created event.");
  const order = context.index.order;
  return {
    version: context.version,
    ...treeScalarsOf(context, context.info),
    skeleton: {
      ids: order.map((entry) => entry.id),
      parents: order.map((entry) => entry.parentId),
      types: order.map((entry) => entry.type),
      roles: order.map((entry) => roleOf(entry) ?? null),
      timestamps: order.map((entry) => entry.timestamp),
    },
    activity: context.activity,
  };
}

/** A user message's text as the session lists show it (its text blocks joined by spaces); "" for any other role. */
export function userText(message: AgentMessage): string {
  if (message.role !== "user") return "";
  if (typeof message.content === "string") return message.content;
  return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(" ");
}

/** The per-session facts an entry changes besides the tree: counts, name, labels, stats. */
export interface EntryFacts {
  name: string | undefined;
  messageCount: number;
  firstUserMessage: string | undefined;
  lastActivity: number | undefined;
  labels: Map<string, string>;
  stats: StatsAccumulator;
}

/**
 * Folds one entry into `facts` IN PLACE (labels: latest per target, empty clears; name: the latest `session_info`; message counts and times; stats).
 * Shared by the tree and the lazy view.
 */
export function foldEntryFacts(facts: EntryFacts, entry: SessionEntry): void {
  facts.stats.add(entry);
  if (entry.type === "label") {
    const label = entry as { targetId: string; label?: string };
    if (label.label) facts.labels.set(label.targetId, label.label);
    else facts.labels.delete(label.targetId);
  } else if (entry.type === "session_info") {
    facts.name = (entry as { name?: string }).name?.trim() || undefined;
  } else if (entry.type === "message") {
    const message = (entry as { message: AgentMessage }).message;
    facts.messageCount += 1;
    if (facts.firstUserMessage === undefined && message.role === "user") facts.firstUserMessage = userText(message) || undefined;
    if ((message.role === "user" || message.role === "assistant") && Number.isFinite(message.timestamp)) {
      facts.lastActivity = Math.max(facts.lastActivity ?? 0, message.timestamp);
    }
  }
}

/** Folds one entry into `context` IN PLACE (callers pass a fresh copy). */
function foldEntryInto(context: SessionTreeContext, entry: SessionEntry): void {
  const { index } = context;
  addToIndex(index, entry);
  const facts: EntryFacts = { name: context.name, messageCount: context.messageCount, firstUserMessage: context.firstUserMessage, lastActivity: context.lastActivity, labels: index.labels, stats: index.stats };
  foldEntryFacts(facts, entry);
  context.name = facts.name;
  context.messageCount = facts.messageCount;
  context.firstUserMessage = facts.firstUserMessage;
  context.lastActivity = facts.lastActivity;
  context.leafId = entry.id;
  context.entryCount = index.order.length;
}

/** Creates the @xstate/store store of one session; readers reach it as {@link SessionTree.store}. */
function createSessionTreeStore() {
  const context: SessionTreeContext = {
    version: 0,
    info: undefined,
    leafId: null,
    name: undefined,
    entryCount: 0,
    messageCount: 0,
    firstUserMessage: undefined,
    lastActivity: undefined,
    index: emptyIndex(),
    activity: emptyActivity(),
  };
  return createStore({
    context,
    on: {
      /** Replaces an EMPTY tree with a snapshot's state (entries stay stubs until read). */
      restored: (state, event: { snapshot: TreeSnapshot; loader: EntryLoader }) => (state.version === 0 ? restoreContext(event.snapshot, event.loader) : state),
      /** One or many stored events (a catch-up when opening) in one transition, through the one fold. */
      loaded: (state, event: { events: readonly StoredEvent[] }) => {
        const next = { ...state };
        for (const stored of event.events) foldStoredInto(next, stored);
        return next;
      },
    },
  });
}

/**
 * The one fold of a stored event into the tree: `session.created` sets `info`, `entry.appended` adds the entry and moves the leaf, `leaf.moved` moves
 * it; every event advances `version` and the activity projection. Mutates `state` IN PLACE (callers pass a fresh copy).
 */
function foldStoredInto(state: SessionTreeContext, event: StoredEvent): void {
  if (isEventOfType(event, "session.created")) state.info = event.data;
  else if (isEventOfType(event, "entry.appended")) foldEntryInto(state, event.data.entry);
  else if (isEventOfType(event, "leaf.moved")) state.leafId = event.data.leafId;
  state.activity = foldActivity(state.activity, event);
  state.version = event.version;
}

/**
 * What readers use of a session tree's @xstate/store store: the snapshot and selections. Declared here, not inferred, so that Arbor's declarations do
 * not pull in @xstate/store's.
 */
export interface SessionTreeStore {
  getSnapshot(): { context: SessionTreeContext };
  select<T>(selector: (context: SessionTreeContext) => T): { subscribe(observer: (value: T) => void): { unsubscribe(): void } };
}

/** A session tree: the store plus a typed `apply` for stored events. */
export interface SessionTree {
  readonly store: SessionTreeStore;
  /** The current context (scalars and index). */
  readonly state: SessionTreeContext;
  /**
   * Folds one stored event of the session stream. Returns the folded entry for `entry.appended`, else undefined. Lower versions are ignored; a gap
   * throws `InvalidStateError`.
   */
  apply(event: StoredEvent): { applied: boolean; entry?: SessionEntry };
  /**
   * Folds a run of stored events in ONE store transition (catch-up when opening). Same rules as `apply`; returns the folded entries. Throws
   * `InvalidStateError` on a gap (nothing folded).
   */
  applyAll(events: readonly StoredEvent[]): SessionEntry[];
  /** Starts an empty tree from a snapshot; throws `InvalidStateError` if the tree is not empty. */
  restore(snapshot: TreeSnapshot, loader: EntryLoader): void;
}

/** Creates an empty session tree (see the module contract). */
export function createSessionTree(): SessionTree {
  const store = createSessionTreeStore();
  return {
    store,
    get state() {
      return store.getSnapshot().context;
    },
    apply(event) {
      const current = store.getSnapshot().context.version;
      if (event.version <= current) return { applied: false };
      if (event.version !== current + 1 && !createGapCheck(store.getSnapshot().context.activity).allows()) {
        throw new InvalidStateError(
          `Session stream event version ${event.version} does not follow version ${current}; events must be applied in order.`,
          { details: { streamId: event.streamId, version: event.version, expected: current + 1 } },
        );
      }
      store.trigger.loaded({ events: [event] });
      return isEventOfType(event, "entry.appended") ? { applied: true, entry: event.data.entry } : { applied: true };
    },
    applyAll(events) {
      const context = store.getSnapshot().context;
      let expected = context.version + 1;
      const gaps = createGapCheck(context.activity);
      const fresh: StoredEvent[] = [];
      for (const event of events) {
        if (event.version < expected) continue;
        if (event.version !== expected && !gaps.allows()) {
          throw new InvalidStateError(
            `Session stream event version ${event.version} does not follow version ${expected - 1}; events must be applied in order.`,
            { details: { streamId: event.streamId, version: event.version, expected } },
          );
        }
        fresh.push(event);
        gaps.fold(event);
        expected = event.version + 1;
      }
      if (fresh.length > 0) store.trigger.loaded({ events: fresh });
      return fresh.flatMap((event) => (isEventOfType(event, "entry.appended") ? [event.data.entry] : []));
    },
    restore(snapshot, loader) {
      if (store.getSnapshot().context.version !== 0) throw new InvalidStateError("A snapshot can only be restored into an empty session tree.");
      store.trigger.restored({ snapshot, loader });
    },
  };
}

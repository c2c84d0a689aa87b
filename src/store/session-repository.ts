/**
 * The session repository over one {@link EventLog}: create, open, list, fork, delete, and the bulk import used by fork and the pi JSONL importer
 * (list fields and fork labels as pi's, `docs/pi-parity.md`).
 * - a session is the stream `sessionStreamId(id)`, opened by `session.created`; `create` on an existing id throws `ExpectedVersionConflictError`;
 * - `open` folds the stream into a fresh, independent handle (a missing session is `SessionNotFoundError`); with a snapshot store it restores the
 *   latest valid checkpoint, folds only what follows and checkpoints every `checkpointEvery` events;
 * - `list` is newest first by the latest user/assistant message time, from the log's summary rows (`session-summary-index.ts`), folding only what a
 *   row lacks; sessions whose data key is destroyed are skipped; a damaged session is a row marked `damaged` in its own tenant's list only;
 * - `delete` removes the stream (with its control and elicitation streams) physically and appends a content-free `session.deleted` tombstone in
 *   `tombstone-<id>`, its audit records included; a half-deleted session (its data key destroyed, its rows left) is finished from what is in clear;
 * - `fork` copies the path root→entry and re-creates its labels (pi's `createBranchedSession`); at one result of a tool batch it forks at the
 *   batch's last result (`batch-end.ts`); `importEntries` is one atomic append;
 * - with `tenant`, only that tenant's sessions exist (another's is indistinguishable from a missing one); forks keep the source's tenant.
 */
import { purgeSessionState } from "./session/session-purge.ts";
import { deleteShreddedSession, isKeyDestroyed, isUnreadableSession, ownerOfUnreadable } from "./session/shredded-session.ts";
import { uuidv7 } from "../core/uuid-v7.ts";
import type { LabelEntry, SessionEntry } from "../core/entries.ts";
import { DataKeyUnavailableError, EntryNotFoundError, InvalidArgumentError, SessionNotFoundError } from "../core/errors.ts";
import type { EventLog, NewEvent } from "./event-log.ts";
import { controlStreamId } from "./events/control-events.ts";
import { elicitationStreamId } from "./events/elicitation-events.ts";
import { sessionIdOfStream, sessionStreamId, tombstoneStreamId, type SessionCreatedData, type SessionDeletedData } from "./events/session-events.ts";
import { isEventOfType } from "./events/catalogue.ts";
import { createAuditProjector } from "./events/audit.ts";
import { batchEnd } from "./session/batch-end.ts";
import { createSessionHandle, generateEntryId } from "./session/session-handle.ts";
import type { SessionHandle, SessionRepository, SessionSummary } from "./session-types.ts";
import { snapshotOf } from "./session/session-tree.ts";
import { mergeSummaries, summarizeEvents, type SessionSummaryRecord } from "./session/session-summary-index.ts";
import { damagedSessionRow } from "./session/damaged-session.ts";
import type { SessionSnapshotStore } from "./session/session-snapshots.ts";
import { createSessionView, type SessionViewInternals } from "./session/session-view.ts";
import { createLazySessionView, headOfTree, type LazySessionView, type SessionHeadState } from "./session/lazy-session-view.ts";

/** A session head is stored again once a handle's view is this many events past the last one. */
const HEAD_EVERY = 100;

/** The head state plus the identity of the stream it was folded from. */
type StoredHeadState = SessionHeadState & { firstEventId: string };

/** Options of {@link createSessionRepository}. */
export interface SessionRepositoryOptions {
  log: EventLog;
  /** Projection snapshots (checkpoints) for fast opening of large sessions; optional. */
  snapshots?: SessionSnapshotStore;
  /**
   * With `snapshots`: `open` writes a checkpoint when it had to fold at least this many events from the log (default 1000). Checkpoints are
   * incremental.
   */
  checkpointEvery?: number;
  /**
   * Scope the repository to one tenant (ours): `create` and `importEntries` write it, and `open`, `list`, `fork` and `delete` see only its sessions;
   * another tenant's session is exactly like a missing one (the same `SessionNotFoundError`, message and details). A session with no `tenant` belongs
   * to `default`. Absent: every tenant (the whole log, for admin tools and servers that check tenants per request).
   */
  tenant?: string;
}

/** The tenant of sessions that name none. */
export const DEFAULT_TENANT = "default";

function cleanInfo(info: SessionCreatedData): SessionCreatedData {
  return Object.fromEntries(Object.entries(info).filter(([, value]) => value !== undefined)) as unknown as SessionCreatedData;
}

/**
 * The one order of every session list (`repo.list()`, `arbor sessions`, `GET /api/sessions`, the CLI's `latest`): the most recently appended first,
 * by `updatedAt` compared as times (the log's ISO 8601 text, SQLite's and PostgreSQL's alike, read with `Date.parse`, never compared as strings); on
 * the same millisecond, the stream that started later in the log first.
 */
function newestFirst(startOf: (row: SessionSummary) => number): (a: SessionSummary, b: SessionSummary) => number {
  return (a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || startOf(b) - startOf(a);
}

/**
 * Creates a session repository over `log` (see the module contract).
 *
 * @example
 * ```ts
 * const repo = createSessionRepository({ log: createMemoryEventLog() });
 * const session = await repo.create();
 * ```
 */
export function createSessionRepository(options: SessionRepositoryOptions): SessionRepository {
  const { log } = options;
  /** Summaries this repository folded itself (streams without a complete row), by stream id. */
  const summaries = new Map<string, SessionSummaryRecord>();

  const { snapshots } = options;
  const checkpointEvery = Math.max(0, options.checkpointEvery ?? 1000);
  const notFound = (id: string) => new SessionNotFoundError(`No session "${id}" in this event log.`, { details: { sessionId: id } });
  const scope = options.tenant;
  if (scope !== undefined && (typeof scope !== "string" || scope === "")) throw new InvalidArgumentError(`createSessionRepository(): tenant must be a non-empty string (got ${JSON.stringify(scope)}).`);
  const visible = (info: { tenant?: string } | undefined) => scope === undefined || (info?.tenant ?? DEFAULT_TENANT) === scope;
  /** The tenant a new session gets: the scope's; a different one asked for is refused. */
  const tenantFor = (asked: string | undefined, what: string) => {
    if (scope !== undefined && asked !== undefined && asked !== scope) {
      throw new InvalidArgumentError(`${what}: tenant "${asked}" differs from the repository's tenant "${scope}".`, { details: { tenant: asked, scope } });
    }
    return asked ?? scope;
  };

  const index = log.sessionIndex;
  /** Stores the view's head in the session index (when the log has one and the stream is clean). */
  const writeHead = (view: SessionViewInternals, firstEventId: string): boolean => {
    if (!index) return false;
    const streamId = sessionStreamId(view.sessionId);
    const status = index.ensure(streamId);
    if (!status || status.unusual > 0) return false;
    const state = "headState" in view ? (view as LazySessionView).headState() : headOfTree(view.tree.state);
    if (!state) return false;
    index.writeHead(streamId, view.version, JSON.stringify({ ...state, firstEventId } satisfies StoredHeadState));
    return true;
  };
  /** The handle, storing a new head every {@link HEAD_EVERY} events folded after `written`. */
  const handleOf = (view: SessionViewInternals, firstEventId: string, written: number): SessionHandle => {
    let last = written;
    return createSessionHandle(log, view, () => {
      if (view.version - last < HEAD_EVERY) return;
      last = view.version;
      writeHead(view, firstEventId);
    });
  };

  /** Opens from the session index: the stored head plus the events after it, entries read lazily; or undefined. */
  const loadIndexed = async (id: string): Promise<SessionHandle | undefined> => {
    if (!index) return undefined;
    const streamId = sessionStreamId(id);
    const status = index.ensure(streamId);
    if (!status || status.unusual > 0) return undefined;
    const head = index.head(streamId);
    if (!head || head.version > status.streamVersion) return undefined;
    const state = JSON.parse(head.state) as StoredHeadState;
    const [first] = await log.readStream(streamId, { fromVersion: 1, limit: 1 });
    if (!first || first.eventId !== state.firstEventId) return undefined;
    if (!visible(state.info)) throw notFound(id);
    const view = createLazySessionView({ sessionId: id, index, version: head.version, state });
    view.applyAll(index.readStream(streamId, head.version + 1));
    return handleOf(view, state.firstEventId, head.version);
  };

  const checkpoint = (view: SessionViewInternals, firstEventId: string, storedCount: number, folded: number) => {
    if (writeHead(view, firstEventId)) return;
    if (!snapshots || folded < Math.max(1, checkpointEvery)) return;
    const order = view.tree.state.index.order;
    const snapshot = snapshotOf(view.tree.state);
    if (view.leafId !== null) snapshot.contextPlan = view.contexts.plan(view.leafId);
    snapshots.write(view.sessionId, snapshot, firstEventId, storedCount, order.slice(storedCount));
  };

  /** Restores from a valid snapshot plus the log's tail, or returns undefined. */
  const loadFromSnapshot = async (id: string): Promise<SessionHandle | undefined> => {
    const stored = snapshots?.read(id);
    if (!snapshots || !stored) return undefined;
    const streamId = sessionStreamId(id);
    const [first] = await log.readStream(streamId, { fromVersion: 1, limit: 1 });
    // A snapshot written before the activity projection existed cannot resume it: fold from the log.
    if (!first || first.eventId !== stored.firstEventId || !stored.snapshot.activity || (await log.streamVersion(streamId)) < stored.snapshot.version) {
      snapshots.delete(id);
      return undefined;
    }
    const tail = await log.readStream(streamId, { fromVersion: stored.snapshot.version + 1 });
    const view = createSessionView(id);
    view.restore(stored.snapshot, snapshots.loader(id));
    if (!visible(view.info)) throw notFound(id);
    view.applyAll(tail);
    checkpoint(view, stored.firstEventId, stored.entryCount, tail.length);
    return handleOf(view, stored.firstEventId, view.version);
  };

  const loadAny = async (id: string): Promise<SessionHandle> => {
    const indexed = await loadIndexed(id);
    if (indexed) return indexed;
    const restored = await loadFromSnapshot(id);
    if (restored) return restored;
    const events = await log.readStream(sessionStreamId(id));
    const first = events[0];
    if (first === undefined || !isEventOfType(first, "session.created") || !visible(first.data)) throw notFound(id);
    const view = createSessionView(id);
    view.applyAll(events);
    checkpoint(view, events[0].eventId, 0, events.length);
    return handleOf(view, events[0].eventId, view.version);
  };

  /** Opens `id`; another tenant's half-deleted or damaged session is missing (`shredded-session.ts`); without a tenant scope its error is shown. */
  const load = (id: string): Promise<SessionHandle> =>
    loadAny(id).catch(async (error: unknown) => {
      if (!isUnreadableSession(error) || (scope === undefined && !isKeyDestroyed(error))) throw error;
      // As the fold: no session.created first, or another tenant's, is a missing session.
      const info = await ownerOfUnreadable(log, id);
      throw info && visible(info) ? error : notFound(id);
    });

  const createWith = async (info: SessionCreatedData, entries: SessionEntry[], leafId?: string | null): Promise<SessionHandle> => {
    const metadata = { sessionId: info.sessionId };
    const events: NewEvent[] = [{ type: "session.created", data: cleanInfo(info), metadata }];
    for (const entry of entries) events.push({ type: "entry.appended", data: { entry }, metadata });
    const last = entries.length > 0 ? entries[entries.length - 1].id : null;
    if (leafId !== undefined && leafId !== last) events.push({ type: "leaf.moved", data: { leafId, fromLeafId: last }, metadata });
    const result = await log.append(sessionStreamId(info.sessionId), events, { expectedVersion: "no_stream" });
    const view = createSessionView(info.sessionId);
    view.applyAll(result.events);
    const firstEventId = result.events[0].eventId;
    writeHead(view, firstEventId);
    return handleOf(view, firstEventId, view.version);
  };

  /** The summary of versions `[from, to]` of `streamId`, folded from the log. */
  const foldRange = async (streamId: string, from: number, to: number): Promise<SessionSummaryRecord> => {
    const events = (await log.readStream(streamId, { fromVersion: from })).filter((event) => event.version <= to);
    return summarizeEvents(streamId, events, from, to);
  };

  /**
   * The summary of the whole stream at `version`: the log's row when it covers it, else the row (or this repository's cached fold) completed by
   * folding what it lacks from the log.
   */
  const summaryOf = async (streamId: string, version: number, stored: SessionSummaryRecord | undefined): Promise<SessionSummaryRecord | undefined> => {
    let summary = stored;
    if (summary !== undefined && summary.fromVersion > 1) summary = mergeSummaries(await foldRange(streamId, 1, summary.fromVersion - 1), summary);
    const cached = summaries.get(streamId);
    if (summary === undefined || (cached !== undefined && cached.version > summary.version && cached.version <= version)) summary = cached;
    if (summary === undefined) summary = await foldRange(streamId, 1, version);
    else if (summary.version < version) summary = mergeSummaries(summary, await foldRange(streamId, summary.version + 1, version));
    if (summary === undefined) return undefined;
    if (summary !== stored) summaries.set(streamId, summary);
    return summary;
  };

  const repository: SessionRepository = {
    log,
    async create(createOptions = {}) {
      return createWith(
        {
          sessionId: createOptions.id ?? uuidv7(),
          cwd: createOptions.cwd ?? process.cwd(),
          createdAt: new Date().toISOString(),
          metadata: createOptions.metadata,
          tenant: tenantFor(createOptions.tenant, "create()"),
        },
        [],
      );
    },
    open: load,
    async list(listOptions = {}): Promise<SessionSummary[]> {
      const wanted = listOptions.tenant;
      if (wanted !== undefined && scope !== undefined && wanted !== scope) return [];
      const only = wanted ?? scope;
      // A log with a tenant index (PostgreSQL) lists only that tenant's streams; the rows' info still decides.
      const tenant = only !== undefined && log.tenantIndex ? { tenant: only } : undefined;
      const streams = await log.listStreams(tenant);
      const stored = new Map((await log.sessionSummaries?.read(tenant))?.map((row) => [row.streamId, row]));
      const rows: SessionSummary[] = [];
      /** Where each stream starts in the log (listStreams gives them in that order): the tie-break. */
      const position = new Map(streams.map((stream, index) => [stream.streamId, index]));
      for (const stream of streams) {
        const id = sessionIdOfStream(stream.streamId);
        if (id === undefined) continue;
        // Another tenant's session is passed over by the tenant stored in clear, before any of its data is read (or decrypted).
        if (only !== undefined && stream.tenant !== undefined && stream.tenant !== only) continue;
        let summary: SessionSummaryRecord | undefined;
        try {
          summary = await summaryOf(stream.streamId, stream.version, stored.get(stream.streamId));
        } catch (error) {
          // A session whose data key is destroyed (a backup restored beside a newer key store) is deleted: not listed.
          if (DataKeyUnavailableError.isInstance(error) && error.details.reason === "destroyed") continue;
          // A damaged one is a marked row of its own tenant's list, never the list's error (`damaged-session.ts`).
          const damaged = await damagedSessionRow(log, stream, id, error, only, DEFAULT_TENANT);
          if (damaged) rows.push(damaged);
          continue;
        }
        const info = summary?.info;
        const owner = info?.tenant ?? DEFAULT_TENANT;
        if (!summary?.starts || !info || (only !== undefined && owner !== only)) continue;
        const row: SessionSummary = {
          id,
          cwd: info.cwd,
          created: info.createdAt,
          modified: summary.lastActivity !== undefined ? new Date(summary.lastActivity).toISOString() : info.createdAt,
          messageCount: summary.messageCount,
          firstMessage: summary.firstMessage ?? "(no messages)",
          tenant: owner,
          // An import is not a change: while nothing was appended after it (one atomic append, one commit time) an imported session changed when its
          // own latest entry says.
          updatedAt: info.source !== undefined && stream.updatedAt === stream.createdAt && summary.lastActivity !== undefined ? new Date(summary.lastActivity).toISOString() : stream.updatedAt,
        };
        if (summary.name !== undefined) row.name = summary.name;
        if (info.parentSessionId !== undefined) row.parentSessionId = info.parentSessionId;
        if (listOptions.stats === true) row.stats = { ...summary.stats, messages: { ...summary.stats.messages }, tokens: { ...summary.stats.tokens } };
        rows.push(row);
      }
      return rows.sort(newestFirst((row) => position.get(sessionStreamId(row.id)) ?? 0));
    },
    async delete(id) {
      const streamId = sessionStreamId(id);
      const notToDelete = () => new SessionNotFoundError(`No session "${id}" to delete.`, { details: { sessionId: id } });
      const events = await log.readStream(streamId).catch(async (error: unknown) => {
        if (isKeyDestroyed(error)) return undefined;
        // Damaged: another tenant's is missing, as when it reads; its owner (or a repository without a tenant scope) gets the error.
        if (scope === undefined || !isUnreadableSession(error)) throw error;
        const owner = await ownerOfUnreadable(log, id);
        throw owner && visible(owner) ? error : notToDelete();
      });
      if (events === undefined) {
        // Half-deleted (a delete stopped after destroying the key): finished from what is in clear, with the same tenant check.
        await deleteShreddedSession(log, id, visible);
        summaries.delete(streamId);
        return snapshots?.delete(id);
      }
      const first = events[0];
      const created = first !== undefined && isEventOfType(first, "session.created") ? first.data : undefined;
      if (events.length === 0 || (scope !== undefined && !visible(created))) throw notToDelete();
      const entries = events.filter((event) => isEventOfType(event, "entry.appended"));
      const tombstone: SessionDeletedData = {
        sessionId: id,
        tenant: created?.tenant ?? "default",
        createdAt: created?.createdAt ?? events[0].time,
        lastEventAt: events[events.length - 1].time,
        deletedAt: new Date().toISOString(),
        eventCount: events.length,
        entryCount: entries.length,
        messageCount: entries.filter((event) => event.data.entry.type === "message").length,
        firstGlobalPosition: events[0].globalPosition,
        lastGlobalPosition: events[events.length - 1].globalPosition,
      };
      // The content-free audit stream (its elicitations' records included, in log order) outlives the session: kept in its tombstone.
      const elicitations = await log.readStream(elicitationStreamId(id));
      const audit = [...events, ...elicitations].sort((a, b) => a.globalPosition - b.globalPosition).flatMap(createAuditProjector());
      if (audit.length > 0) tombstone.audit = audit;
      // Issued in the same tick: the SQLite and PostgreSQL logs commit them in one group.
      const [removed] = await Promise.all([
        log.deleteStream(streamId),
        // Its control requests (steer texts are content) and its elicitations (messages and answers are content) go with it.
        log.deleteStream(controlStreamId(id)),
        log.deleteStream(elicitationStreamId(id)),
        log.append(tombstoneStreamId(id), [{ type: "session.deleted", data: tombstone, metadata: { sessionId: id } }]),
      ]);
      summaries.delete(streamId);
      snapshots?.delete(id);
      if (removed === 0) throw new SessionNotFoundError(`No session "${id}" to delete.`, { details: { sessionId: id } });
      // Its memory rows and the workspace blobs nothing else references go with it.
      await purgeSessionState(log, { sessionId: id, tenant: tombstone.tenant, events });
    },
    async fork(id, forkOptions = {}) {
      const source = await load(id);
      const view = source.view;
      const requested = forkOptions.entryId ?? view.leafId;
      if (requested !== null && !view.getEntry(requested)) {
        throw new EntryNotFoundError(`Cannot fork session ${id} at "${requested}": no such entry.`, { details: { sessionId: id, entryId: requested } });
      }
      // A fork at one result of a tool batch keeps its siblings' results (see batch-end.ts).
      const entryId = requested === null ? null : batchEnd(view, requested);
      const path = entryId === null ? [] : view.getBranch(entryId).filter((entry) => entry.type !== "label");
      const ids = new Set(path.map((entry) => entry.id));
      const labels: LabelEntry[] = [];
      let parentId = path.length > 0 ? path[path.length - 1].id : null;
      // Latest label per target, in pi's label-map order (a re-label keeps its place, a clear removes it).
      const latestLabels = new Map<string, LabelEntry>();
      for (const entry of view.getEntries()) {
        if (entry.type !== "label") continue;
        const label = entry as LabelEntry;
        if (label.label) latestLabels.set(label.targetId, label);
        else latestLabels.delete(label.targetId);
      }
      for (const [target, latest] of latestLabels) {
        if (!ids.has(target)) continue;
        const label: LabelEntry = {
          type: "label",
          id: generateEntryId((candidate) => ids.has(candidate)),
          parentId,
          timestamp: latest.timestamp,
          targetId: target,
          label: latest.label,
        };
        ids.add(label.id);
        labels.push(label);
        parentId = label.id;
      }
      return createWith(
        {
          sessionId: forkOptions.newId ?? uuidv7(),
          cwd: view.info.cwd,
          createdAt: new Date().toISOString(),
          metadata: view.info.metadata,
          tenant: view.info.tenant,
          parentSessionId: id,
          parentEntryId: entryId ?? undefined,
        },
        [...path, ...labels],
      );
    },
    async importEntries(importOptions) {
      return createWith(
        {
          sessionId: importOptions.id ?? uuidv7(),
          cwd: importOptions.cwd ?? process.cwd(),
          createdAt: importOptions.createdAt ?? new Date().toISOString(),
          metadata: importOptions.metadata,
          tenant: tenantFor(importOptions.tenant, "importEntries()"),
          parentSessionId: importOptions.parentSessionId,
          parentEntryId: importOptions.parentEntryId,
          source: importOptions.source,
        },
        importOptions.entries,
        importOptions.leafId,
      );
    },
  };
  return repository;
}

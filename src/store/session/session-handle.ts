/**
 * A live session (entry ids pi's): its {@link SessionView} plus writes through the event log. Each write is ONE append with the view's version as
 * the expected version (a stale handle gets `ExpectedVersionConflictError`: `refresh()`, then retry); a handle's writes are serialized, and the view
 * applies the stored events the log returned. `parentId` defaults to the leaf and must exist (`EntryNotFoundError`); a given `id` must be unique
 * (`InvalidArgumentError`); a schema failure writes nothing. `events$` replays from `fromVersion` (exclusive) then tails; `auditEvents$` projects
 * the session's and its elicitations' events in log order (`session-audit.ts`).
 */
import { randomUUID } from "node:crypto";
import type { Observable } from "rxjs";
import type { SessionEntry } from "../../core/entries.ts";
import { EntryNotFoundError, InvalidArgumentError } from "../../core/errors.ts";
import type { EventLog, EventMetadata, NewEvent, StoredEvent } from "../event-log.ts";
import { arborEvents, isEventOfType, type ArborEvent } from "../events/catalogue.ts";
import { sessionStreamId } from "../events/session-events.ts";
import { toAuditEvents, type AuditEvent } from "../events/audit.ts";
import { sessionAuditSource } from "./session-audit.ts";
import type { SessionViewInternals } from "./session-view.ts";
import type { NewEntry, SessionHandle } from "../session-types.ts";
import { ignoreError } from "../../core/ignored.ts";

/** Draws a pi-style 8-hex entry id not in `taken` (100 tries, then a full UUID, as pi does). */
export function generateEntryId(taken: (id: string) => boolean): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const id = randomUUID().slice(0, 8);
    if (!taken(id)) return id;
  }
  return randomUUID();
}

/**
 * Wraps a view and a log into a handle (see the module contract). The view must already hold the session's events. `afterApply` runs after each
 * write's (or refresh's) events were applied (the repository stores session heads there).
 */
export function createSessionHandle(log: EventLog, view: SessionViewInternals, afterApply?: () => void): SessionHandle {
  const streamId = sessionStreamId(view.sessionId);
  let queue: Promise<unknown> = Promise.resolve();

  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(ignoreError("a failed session operation rejects its own caller; the queue goes on"));
    return run;
  };

  const appendChecked = async (events: NewEvent[]): Promise<StoredEvent[]> => {
    const result = await log.append(streamId, events, { expectedVersion: view.version });
    for (const event of result.events) view.apply(event);
    afterApply?.();
    return result.events;
  };

  const withMetadata = (metadata: EventMetadata | undefined): EventMetadata => ({ ...metadata, sessionId: view.sessionId });

  const prepareEntries = (entries: NewEntry[]): SessionEntry[] => {
    const batchIds = new Set<string>();
    const taken = (id: string) => batchIds.has(id) || view.getEntry(id) !== undefined;
    let parentId = view.leafId;
    return entries.map((input, position) => {
      if (input.id !== undefined && (typeof input.id !== "string" || input.id.length === 0 || taken(input.id))) {
        throw new InvalidArgumentError(`Entry ${position} of the batch: id ${JSON.stringify(input.id)} is empty or already used in session ${view.sessionId}.`);
      }
      if (input.parentId !== undefined && input.parentId !== null && !taken(input.parentId)) {
        throw new EntryNotFoundError(`Entry ${position} of the batch: parent "${input.parentId}" is not in session ${view.sessionId}.`, {
          details: { parentId: input.parentId },
        });
      }
      const id = input.id ?? generateEntryId(taken);
      batchIds.add(id);
      const entry = {
        ...input,
        id,
        parentId: input.parentId !== undefined ? input.parentId : parentId,
        timestamp: input.timestamp ?? new Date().toISOString(),
      } as SessionEntry;
      parentId = id;
      return entry;
    });
  };

  const ownership = log.ownership;
  const handle: SessionHandle = {
    id: view.sessionId,
    view,
    ...(ownership && {
      ownership: {
        acquire: (owner, options) => ownership.acquire(streamId, owner, options),
        isOwnedElsewhere: () => ownership.isOwnedElsewhere(streamId),
        fencesAppends: ownership.fencesAppends,
        token: () => ownership.tokenOf(streamId),
      },
    }),
    appendEntries(entries, options = {}) {
      return serialized(async () => {
        const prepared = prepareEntries(entries);
        const metadata = withMetadata(options.metadata);
        const events: NewEvent[] = prepared.map((entry) => ({ type: "entry.appended", data: { entry }, metadata }));
        for (const extra of options.extraEvents ?? []) events.push({ ...extra, metadata: { ...metadata, ...extra.metadata } });
        if (events.length === 0) return [];
        const stored = await appendChecked(events);
        const ids = new Set(prepared.map((entry) => entry.id));
        return stored.flatMap((event) => {
          if (!isEventOfType(event, "entry.appended")) return [];
          const { entry } = event.data;
          return ids.has(entry.id) ? [entry] : [];
        });
      });
    },
    async appendEntry(entry, options = {}) {
      const [stored] = await handle.appendEntries([entry], options);
      return stored;
    },
    appendEvents(events) {
      return serialized(() => appendChecked(events.map((event) => ({ ...event, metadata: withMetadata(event.metadata) }))));
    },
    moveLeaf(leafId) {
      return serialized(async () => {
        if (leafId !== null && !view.getEntry(leafId)) {
          throw new EntryNotFoundError(`Cannot move the leaf: no entry "${leafId}" in session ${view.sessionId}.`, { details: { leafId } });
        }
        if (leafId === view.leafId) return;
        await appendChecked([{ type: "leaf.moved", data: { leafId, fromLeafId: view.leafId }, metadata: withMetadata(undefined) }]);
      });
    },
    events$(options = {}): Observable<ArborEvent> {
      return log.subscribe({ streamId, fromVersion: options.fromVersion ?? 0 }).pipe(arborEvents());
    },
    auditEvents$(): Observable<AuditEvent> {
      return sessionAuditSource(log, view.sessionId).pipe(toAuditEvents());
    },
    refresh() {
      return serialized(async () => {
        const events = await log.readStream(streamId, { fromVersion: view.version + 1 });
        for (const event of events) view.apply(event);
        afterApply?.();
        return events.length;
      });
    },
  };
  return handle;
}

/**
 * What a session delete removes beside its events (ours; `docs/privacy.md`): the session's memory rows (a principal's memory stays), the
 * workspace blobs no kept checkpoint of the same tenant references or bases a delta on, and its use in the tenant's budget ledger (a
 * `budget.reset`, when the tenant has a ledger: the tenant's own use stays). Runs after the events are gone; O(log), a delete is rare.
 */
import type { EventLog, StoredEvent } from "../event-log.ts";
import { isEventOfType } from "../events/catalogue.ts";
import { sessionStreamId } from "../events/session-events.ts";
import { budgetStreamId } from "../budget-ledger.ts";

/** What {@link purgeSessionState} removed. */
export interface PurgeResult {
  /** Workspace blobs removed. */
  blobs: number;
}

/** Removes the deleted session's memory rows and its unreferenced blobs (see the module contract). */
export async function purgeSessionState(log: EventLog, deleted: { sessionId: string; tenant: string; events: readonly StoredEvent[] }): Promise<PurgeResult> {
  const { tenant } = deleted;
  const streamId = sessionStreamId(deleted.sessionId);
  await log.memoryIndex?.drop(tenant, streamId);
  const ledger = budgetStreamId(tenant);
  if ((await log.streamVersion(ledger)) > 0) {
    await log.append(ledger, [{ type: "budget.reset", data: { sessionId: deleted.sessionId, reason: "session.deleted" } }], { expectedVersion: "any" });
  }
  const blobs = log.workspaceBlobs;
  if (!blobs) return { blobs: 0 };
  const candidates = new Set<string>();
  for (const event of deleted.events) {
    if (!isEventOfType(event, "workspace.checkpointed")) continue;
    for (const change of event.data.changes) if (change.node?.kind === "file") candidates.add(change.node.blob);
  }
  if (candidates.size === 0) return { blobs: 0 };
  const tenants = new Map<string, string>();
  const referenced = new Map<string, Set<string>>();
  for (const event of await log.readAll({ types: ["session.created", "workspace.checkpointed"] })) {
    if (event.streamId === streamId) continue;
    if (isEventOfType(event, "session.created")) tenants.set(event.streamId, event.data.tenant ?? "default");
    else if (isEventOfType(event, "workspace.checkpointed")) {
      const set = referenced.get(event.streamId) ?? referenced.set(event.streamId, new Set()).get(event.streamId)!;
      for (const change of event.data.changes) if (change.node?.kind === "file") set.add(change.node.blob);
    }
  }
  const live = new Set<string>();
  for (const [stream, hashes] of referenced) if ((tenants.get(stream) ?? "default") === tenant) for (const hash of hashes) live.add(hash);
  const baseOf = new Map((await blobs.list(tenant)).map((row) => [row.hash, row.base] as const));
  const closure = (start: Iterable<string>) => {
    const out = new Set<string>();
    for (let hash of start) {
      for (let depth = 0; depth < 64 && !out.has(hash); depth++) {
        out.add(hash);
        const base = baseOf.get(hash);
        if (!base) break;
        hash = base;
      }
    }
    return out;
  };
  const keep = closure(live);
  const remove = [...closure(candidates)].filter((hash) => !keep.has(hash) && baseOf.has(hash));
  return { blobs: remove.length ? await blobs.remove(tenant, remove) : 0 };
}

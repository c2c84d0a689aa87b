/**
 * The runs a fleet's workers continue with no request: {@link foldOpenRun} keeps each session's last run while open or `suspended`;
 * {@link isRunOrphaned} says its owner is gone (no lease, or a dead pid; never this process, which is its pid, host and start time); a suspended run is ready once no gated call waits.
 */
import { isCurrentRunOwner, isRunOwnerAlive } from "../machines/run-lease.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { sessionIdOfStream } from "../store/events/session-events.ts";

/** The logged types {@link foldOpenRun} reads. */
export const OPEN_RUN_EVENT_TYPES = ["run.started", "run.resumed", "run.ended", "approval.ended"] as const;

/** A session's last run, while a worker may have to continue it. */
export interface OpenRun {
  sessionId: string;
  streamId: string;
  runId: string;
  /** `metadata.owner` of its `run.started` or last `run.resumed`. */
  owner: unknown;
  status: "open" | "suspended";
  /** Suspended: the gated calls still waiting for a decision. */
  waiting: string[];
}

/** Folds one run or approval event into the per-session map (a new map when it changes). */
export function foldOpenRun(runs: Map<string, OpenRun>, event: StoredEvent): Map<string, OpenRun> {
  const sessionId = sessionIdOfStream(event.streamId);
  if (sessionId === undefined) return runs;
  const current = runs.get(sessionId);
  const next = new Map(runs);
  if (isEventOfType(event, "run.started")) {
    next.set(sessionId, { sessionId, streamId: event.streamId, runId: event.data.runId, owner: event.metadata.owner, status: "open", waiting: [] });
  } else if (isEventOfType(event, "run.resumed")) {
    if (current?.runId !== event.data.runId) return runs;
    next.set(sessionId, { ...current, owner: event.metadata.owner, status: "open" });
  } else if (isEventOfType(event, "run.ended")) {
    if (current?.runId !== event.data.runId) return runs;
    if (event.data.status === "suspended") next.set(sessionId, { ...current, status: "suspended", waiting: [...event.data.pendingToolCallIds] });
    else next.delete(sessionId);
  } else if (isEventOfType(event, "approval.ended")) {
    if (current?.status !== "suspended" || !current.waiting.includes(event.data.toolCallId)) return runs;
    next.set(sessionId, { ...current, waiting: current.waiting.filter((id) => id !== event.data.toolCallId) });
  } else return runs;
  return next;
}

/** True when `run` is open and its owner is gone (see the module contract). */
export async function isRunOrphaned(log: EventLog, run: OpenRun): Promise<boolean> {
  if (run.status !== "open") return false;
  // This process is pid, host AND start time: a restarted container reuses the pid and host of the process that died.
  if (isCurrentRunOwner(run.owner)) return false;
  if (log.ownership) return !(await log.ownership.isOwnedElsewhere(run.streamId));
  return !isRunOwnerAlive(run.owner);
}

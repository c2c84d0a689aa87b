/**
 * The control follower, one per harness: subscribes to `control.requested` from the log's head and applies each to the session open here, only
 * when this process is working it (stop the matching run and drop its queued steers and follow-ups, queue steer/follow-up, record approve/deny); otherwise nothing is written. Each applied
 * request gets one `control.ended` with a deterministic id; subscription errors go to `onError`, never thrown. A `session.deleted` tombstone (a
 * delete by this process or another) stops the work of that session here the same way, and answers nothing: the deleted session's run can write
 * nothing more (its stream is gone, so its next append is refused).
 */
import { ArborError } from "../core/errors.ts";
import type { EventLog, StoredEvent } from "../store/event-log.ts";
import { isArborEvent } from "../store/events/catalogue.ts";
import { controlStreamId, type ControlRequest } from "../store/events/control-events.ts";
import { ignoreError } from "../core/ignored.ts";

/** What the follower drives: the session's own controls (a `HarnessSession` fits). */
export interface ControlTarget {
  readonly id: string;
  getState(): { operation: string; runId?: string };
  abort(reason?: string): void;
  clearAllQueues(): void;
  steer(message: string): void;
  followUp(message: string): void;
  approve(toolCallId: string, decision?: { reason?: string }): Promise<unknown>;
  deny(toolCallId: string, decision?: { reason?: string }): Promise<unknown>;
}

/** A running follower. */
export interface ControlFollower {
  /** Resolves once the follower listens (requests written after this are seen). */
  readonly ready: Promise<void>;
  stop(): void;
}

/** Options of {@link followControl}. */
export interface ControlFollowerOptions {
  /** Where subscription and write errors go (default: `process.emitWarning`). */
  onError?: (error: unknown) => void;
}

const working = (operation: string) => operation !== "idle" && operation !== "awaiting-approval";

/** Applies `request` when this process works the session; true when it did (or tried). */
async function apply(target: ControlTarget, request: ControlRequest): Promise<boolean> {
  const state = target.getState();
  switch (request.action) {
    case "stop":
      if (!working(state.operation) || (request.runId !== undefined && state.runId !== request.runId)) return false;
      target.abort(request.reason ?? "stopped by a control request");
      // A stop ends the work: steers and follow-ups the run had not taken yet go too (as pi's Escape takes them back).
      target.clearAllQueues();
      return true;
    case "steer":
    case "followUp":
      if (state.operation !== "running") return false;
      if (request.action === "steer") target.steer(request.text);
      else target.followUp(request.text);
      return true;
    case "approve":
    case "deny": {
      if (state.operation !== "awaiting-approval") return false;
      const decision = request.reason === undefined ? undefined : { reason: request.reason };
      await (request.action === "approve" ? target.approve(request.toolCallId, decision) : target.deny(request.toolCallId, decision));
      return true;
    }
  }
}

/** Follows the control requests of the log for the sessions `sessionOf` knows (see the module contract). */
export function followControl(log: EventLog, sessionOf: (sessionId: string) => ControlTarget | undefined, options: ControlFollowerOptions = {}): ControlFollower {
  const onError = options.onError ?? ((error: unknown) => process.emitWarning(`control follower: ${error instanceof Error ? error.message : String(error)}`, { code: "ARBOR_CONTROL_FOLLOWER" }));
  let stopped = false;
  let unsubscribe: (() => void) | undefined;

  const answer = async (event: StoredEvent, request: ControlRequest, failure?: unknown) => {
    const failed = failure === undefined ? {} : { status: "failed" as const, ...(ArborError.isInstance(failure) ? { code: failure.code } : {}), error: failure instanceof Error ? failure.message : String(failure) };
    await log.append(controlStreamId(request.sessionId), [{ eventId: `${event.eventId}:ended`, type: "control.ended", data: { requestId: event.eventId, action: request.action, sessionId: request.sessionId, status: "applied", ...failed } }], { expectedVersion: "any" });
  };

  const handle = async (event: StoredEvent) => {
    if (isArborEvent(event) && event.type === "session.deleted") {
      const target = sessionOf(event.data.sessionId);
      if (target) await apply(target, { action: "stop", sessionId: event.data.sessionId, reason: `the session "${event.data.sessionId}" was deleted` });
      return;
    }
    if (!isArborEvent(event) || event.type !== "control.requested") return;
    const request = event.data;
    const target = sessionOf(request.sessionId);
    if (!target) return;
    let applied: boolean;
    try {
      applied = await apply(target, request);
    } catch (error) {
      await answer(event, request, error);
      return;
    }
    if (applied) await answer(event, request);
  };

  const ready = log.headPosition().then((head) => {
    if (stopped) return;
    // One request at a time, in log order.
    let queue = Promise.resolve();
    const subscription = log.subscribe({ fromPosition: head, types: ["control.requested", "session.deleted"] }).subscribe({
      next: (event) => {
        queue = queue.then(() => handle(event)).catch(onError);
      },
      error: (error: unknown) => {
        if (!stopped) onError(error);
      },
    });
    unsubscribe = () => subscription.unsubscribe();
  });
  ready.catch(onError);

  return {
    ready: ready.catch(ignoreError("a failed start of the control follower goes to onError")),
    stop() {
      stopped = true;
      unsubscribe?.();
    },
  };
}

/**
 * The agent's approvals, every answer read from the log (`view.activity.approvals`, after catching up) so any process decides and resumes:
 * `sync()` moves the slot in and out of `awaiting-approval`; `decide()` records one decision at a time through the writer (`SessionBusyError` while
 * the slot works); `resumeOf()` builds the resume run (`ApprovalPendingError`, `InvalidStateError`).
 */
import type { Actor } from "xstate";
import { ApprovalPendingError, InvalidStateError, SessionBusyError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { AgentWriter } from "./agent-writer.ts";
import { operationOf, type agentMachine } from "./agent.machine.ts";
import { approvalsOf, openApprovals, type ApprovalRecord } from "./approval-fold.ts";
import { listPendingApprovals, recordApprovalDecision } from "./approvals.ts";
import { toolCallsOf } from "./loop-messages.ts";
import type { ResumeDecision } from "./run-batch-settle.ts";
import type { ApprovalDecision } from "../core/vocabulary.ts";
import { ignoreError } from "../core/ignored.ts";

/** What the approvals need from their agent. */
export interface AgentApprovalsDeps {
  session: SessionHandle;
  /** The agent actor (built after its approvals: read when used). */
  actor: () => Actor<typeof agentMachine>;
  writer: AgentWriter;
  /** Resolves once the agent's recovery is done. */
  ready: () => Promise<void>;
  /** Catches the view up and replaces a poisoned writer. */
  reload: () => Promise<void>;
  /** Something runs in the slot (awaiting-approval is parked, not working). */
  isWorking: () => boolean;
}

/** The approvals of one agent (see the module contract). */
export class AgentApprovals {
  #deps: AgentApprovalsDeps;
  /** The decision being recorded: the next one starts after it (no decision is kept here). */
  #decisions: Promise<unknown> = Promise.resolve();

  constructor(deps: AgentApprovalsDeps) {
    this.#deps = deps;
  }

  /** The open approvals of the log. */
  open(): ApprovalRecord[] {
    return openApprovals(approvalsOf(this.#deps.session.view.activity));
  }

  /** Puts the slot in `awaiting-approval` when the log has open approvals, back to idle when none is left. */
  sync(): void {
    const actor = this.#deps.actor();
    const open = this.open();
    const operation = operationOf(actor.getSnapshot());
    if (open.length > 0 && operation === "idle") actor.send({ type: "APPROVAL.AWAIT" });
    else if (open.length === 0 && operation === "awaiting-approval") actor.send({ type: "APPROVAL.CLEAR" });
  }

  /** Records a decision of `toolCallId` (see the module contract). */
  decide(toolCallId: string, status: ApprovalDecision, reason: string | undefined) {
    const { session, writer } = this.#deps;
    const next = this.#decisions.then(async () => {
      await this.#deps.ready();
      if (this.#deps.isWorking()) {
        const busy = operationOf(this.#deps.actor().getSnapshot());
        throw new SessionBusyError(`${status === "approved" ? "approve" : "deny"}(): session ${session.id} is ${busy}; decide once the run stopped for approval.`, {
          details: { sessionId: session.id, busyWith: busy },
        });
      }
      await writer.now.flush();
      if (writer.now.failure !== undefined) await this.#deps.reload();
      // Another process may have decided (or resumed) since: decide on what the log holds now.
      await session.refresh?.();
      const result = await recordApprovalDecision(session, { toolCallId, status, ...(reason !== undefined ? { reason } : {}) }, async (events) => {
        writer.now.push(...events);
        await writer.now.commit();
      });
      this.sync();
      return result;
    });
    this.#decisions = next.catch(ignoreError("a failed decision rejects its own caller; the queue goes on"));
    return next;
  }

  /** The calls waiting for a decision, after catching up with other processes when idle or waiting. */
  async pending() {
    await this.#deps.ready();
    if (!this.#deps.isWorking()) {
      await this.#deps.writer.now.flush();
      await this.#deps.session.refresh?.();
      this.sync();
    }
    return listPendingApprovals(this.#deps.session);
  }

  /** The resume of the open approvals: the assistant holding them, its calls without a result, the decisions. */
  resumeOf(messages: AgentMessage[], abort: { reason?: string } | undefined) {
    const { session } = this.#deps;
    const open = this.open();
    if (open.length === 0) throw new InvalidStateError(`Session ${session.id} has no tool call waiting for approval; prompt() or continue() instead.`);
    const undecided = open.filter((record) => record.status === "pending").map((record) => record.toolCallId);
    if (!abort && undecided.length > 0) {
      throw new ApprovalPendingError(`continue(): ${undecided.length} tool call(s) still wait for a decision (${undecided.join(", ")}); approve() or deny() each first, or abort().`, {
        details: { sessionId: session.id, pending: undecided },
      });
    }
    const byId = new Map(open.map((record) => [record.toolCallId, record]));
    const answered = new Set<string>();
    for (let index = messages.length - 1; index >= 0; index -= 1) {
      const message = messages[index];
      if (message.role === "toolResult" && !isSynthetic(message)) answered.add(message.toolCallId);
      if (message.role !== "assistant") continue;
      const calls = toolCallsOf(message);
      if (!calls.some((call) => byId.has(call.id))) break;
      const callIds = calls.filter((call) => !answered.has(call.id)).map((call) => call.id);
      const decisions: Record<string, ResumeDecision> = {};
      for (const id of callIds) {
        const record = byId.get(id);
        if (!record) continue;
        decisions[id] = abort
          ? { status: "cancelled", ...(abort.reason ? { reason: abort.reason } : {}), inputDigest: record.inputDigest, record: record.status === "pending" }
          : { status: record.status === "denied" ? "denied" : record.status === "cancelled" ? "cancelled" : "approved", ...(record.reason ? { reason: record.reason } : {}), inputDigest: record.inputDigest };
      }
      return { assistant: message, callIds, decisions, ...(abort ? { abort } : {}) };
    }
    throw new InvalidStateError(
      `Session ${session.id}: the tool calls waiting for approval (${open.map((record) => record.toolCallId).join(", ")}) are not on the current branch's last assistant message; move back to it to resume them.`,
    );
  }
}

/** A result the context's pairing repair made up for a call without one (`store/session/pairing.ts`). */
export function isSynthetic(message: { details?: unknown }): boolean {
  return (message.details as { arborSynthetic?: unknown } | undefined)?.arborSynthetic === true;
}

/**
 * The bodies of `approvals`, `approve` and `deny` (contract: `approval-commands.ts`), and the
 * pending-call printing and TTY questions `arbor run --approve` uses.
 */
import { createInterface } from "node:readline/promises";
import { ApprovalConflictError, ApprovalNotFoundError } from "../../core/errors.ts";
import type { PendingApproval } from "../../machines/approval-fold.ts";
import { listPendingApprovals, recordApprovalDecision } from "../../machines/approvals.ts";
import { rethrowRefusal } from "../cli-error.ts";
import { withStore, type StoreFlags } from "../store-context.ts";
import type { ApprovalDecision } from "../../core/vocabulary.ts";

/** One line for a waiting call: `<session> <callId> <tool> <status> <input JSON>`. */
export function pendingLine(sessionId: string, call: PendingApproval): string {
  return `${sessionId} ${call.toolCallId} ${call.toolName} ${call.status} ${JSON.stringify(call.input)}`;
}

/** `arbor approvals [session]`. */
export async function approvalsAction(reference: string | undefined, flags: { json?: boolean }, globals: StoreFlags): Promise<void> {
  await withStore(globals, { mustExist: true }, async (store) => {
    const ids = reference ? [await store.resolveSessionId(reference)] : (await store.listOpenable()).map((session) => session.id);
    let printed = 0;
    for (const id of ids) {
      for (const call of await listPendingApprovals(await store.repo.open(id))) {
        printed += 1;
        process.stdout.write(`${flags.json ? JSON.stringify({ sessionId: id, ...call }) : pendingLine(id, call)}\n`);
      }
    }
    if (printed === 0 && !flags.json) process.stdout.write("No tool call waits for approval.\n");
  });
}

/** `arbor approve` / `arbor deny`. */
export async function decideAction(reference: string, callId: string, status: ApprovalDecision, reason: string | undefined, globals: StoreFlags): Promise<void> {
  await withStore(globals, { mustExist: true }, async (store) => {
    const session = await store.openSessionForWrite(reference);
    try {
      const result = await recordApprovalDecision(session, { toolCallId: callId, status, ...(reason !== undefined ? { reason } : {}) });
      process.stdout.write(`${callId} ${status}${result.changed ? "" : " (unchanged: already recorded)"}\n`);
      process.stderr.write(
        result.undecided.length > 0
          ? `still waiting: ${result.undecided.join(", ")} (arbor approvals ${session.id})\n`
          : `go on with: arbor run --session ${session.id}\n`,
      );
    } catch (error) {
      rethrowRefusal(error, [ApprovalNotFoundError, ApprovalConflictError]);
    }
  });
}

/** Asks on the terminal about each waiting call: `y` approves, anything else denies with it as the reason (empty: "declined at the prompt"). */
export async function askApprovals(calls: PendingApproval[], decide: (call: PendingApproval, approved: boolean, reason?: string) => Promise<unknown>): Promise<void> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (const call of calls.filter((item) => item.status === "pending")) {
      const answer = (await rl.question(`approve ${call.toolName} ${JSON.stringify(call.input)} (${call.toolCallId})? [y = yes, anything else = no, with the reason] `)).trim();
      if (/^y(es)?$/i.test(answer)) await decide(call, true);
      else await decide(call, false, answer === "" || /^n(o)?$/i.test(answer) ? "declined at the prompt" : answer);
    }
  } finally {
    rl.close();
  }
}

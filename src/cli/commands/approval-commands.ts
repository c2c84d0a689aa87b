/**
 * `arbor approvals [session]`, `arbor approve <session> <callId>`, `arbor deny <session>
 * <callId> --reason "..."`: the human side of durable tool approval; the bodies are
 * in `approval-actions.ts`, loaded lazily.
 *
 * Contract (ours):
 * - `approvals` lists the tool calls waiting for approval (undecided, or decided and not yet
 *   resumed): one line per call, `<session> <callId> <tool> <status> <input JSON>`, or JSON lines
 *   with `--json`; without a session, every session's; "No tool call waits for approval." when none;
 * - `approve` / `deny` record the decision in the log and print it; the run goes on with
 *   `arbor run --session <id>` (or `--continue`); a repeated identical decision prints
 *   "unchanged" and exits 0; an unknown call, a settled call or a conflicting decision exits 1
 *   naming why (the decision is not written); `deny` needs `--reason` (the model reads it);
 * - exit codes: 0 done, 1 refused, 2 usage errors.
 *
 * @example
 * ```sh
 * arbor run --approve bash "clean the build folder"   # exits 3: a bash call waits
 * arbor approvals
 * arbor approve latest call_abc
 * arbor run --continue
 * ```
 */
import type { Command } from "commander";

const loadActions = async () => import("./approval-actions.ts");

/** Registers `approvals`, `approve` and `deny` on `program`. */
export function registerApprovalCommands(program: Command, globals: () => { db?: string }): void {
  program
    .command("approvals")
    .description("List the tool calls waiting for approval (arbor run --approve ...)")
    .argument("[session]", "session id, unique prefix, or latest (default: every session)")
    .option("--json", "one JSON object per line")
    .action(async (reference: string | undefined, flags: { json?: boolean }) => {
      const { approvalsAction } = await loadActions();
      await approvalsAction(reference, flags, globals());
    });
  program
    .command("approve")
    .description("Approve a tool call waiting for approval; then arbor run --session <id> goes on")
    .argument("<session>", "session id, unique prefix, or latest")
    .argument("<callId>", "the tool call id (see arbor approvals)")
    .option("--reason <text>", "why (kept in the log)")
    .action(async (reference: string, callId: string, flags: { reason?: string }) => {
      const { decideAction } = await loadActions();
      await decideAction(reference, callId, "approved", flags.reason, globals());
    });
  program
    .command("deny")
    .description("Deny a tool call waiting for approval; the model is told you declined, and why")
    .argument("<session>", "session id, unique prefix, or latest")
    .argument("<callId>", "the tool call id (see arbor approvals)")
    .requiredOption("--reason <text>", "why (the model reads it)")
    .action(async (reference: string, callId: string, flags: { reason: string }) => {
      const { decideAction } = await loadActions();
      await decideAction(reference, callId, "denied", flags.reason, globals());
    });
}

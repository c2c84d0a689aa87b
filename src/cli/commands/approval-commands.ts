/**
 * `arbor approvals [session]`, `approve <session> <callId>`, `deny <session> <callId> --reason` (bodies in `approval-actions.ts`, lazy): list waiting
 * calls (`<session> <callId> <tool> <status> <input JSON>`, or `--json`) and record decisions; a repeated one prints "unchanged" (exit 0), an
 * unknown, settled or conflicting one exits 1 with nothing written.
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

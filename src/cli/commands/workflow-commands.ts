/**
 * `arbor workflow run <file>`, `workflow approve|deny <id> <step>`, `workflow abort <id>` and `arbor workflows` (bodies in `workflow-actions.ts`,
 * loaded lazily). `run` imports the module's workflow and runs it over the CLI's log (`--resume <id>` goes on with a run, with its recorded
 * endpoint); `done` prints the output and exits 0, `suspended` lists waiting approvals and exits 3, `failed`/`aborted` exit 1.
 */
import type { Command } from "commander";
import type { ModelFlags } from "../config.ts";
import { withModelFlags } from "./model-commands.ts";

const loadActions = async () => import("./workflow-actions.ts");

/** Registers `workflow` (run, approve, deny, abort) and `workflows` on `program`. */
export function registerWorkflowCommands(program: Command, globals: () => { db?: string; tenant?: string }, exit: { code: number }): void {
  const workflow = program.command("workflow").description("Run workflows (defineWorkflow modules) and decide their approval steps");
  withModelFlags(
    workflow
      .command("run")
      .description("Run a workflow module (default export: a defineWorkflow workflow); exit code 3 when an approval step waits")
      .argument("<file>", "the module (.mjs, .js; .ts under tsx)")
      .option("--input <json>", "the workflow's input as JSON (default {})")
      .option("--resume <id>", "go on with this run (after a crash, or once its approvals are decided)")
      .option("--id <id>", "the new run's id (default: a new UUID)")
      .option("--cwd <dir>", "where artifacts are written and agents work (default: the current directory)"),
  ).action(async (file: string, flags: ModelFlags & { input?: string; resume?: string; id?: string; cwd?: string }) => {
    const { workflowRunAction } = await loadActions();
    await workflowRunAction(file, flags, globals(), exit);
  });
  workflow
    .command("approve")
    .description("Approve a workflow's approval step; then arbor workflow run <file> --resume <id> goes on")
    .argument("<id>", "the workflow run id (see arbor workflows)")
    .argument("<step>", "the approval step's id")
    .option("--reason <text>", "why (kept in the log)")
    .action(async (id: string, step: string, flags: { reason?: string }) => {
      const { workflowDecideAction } = await loadActions();
      await workflowDecideAction(id, step, "approved", flags.reason, globals());
    });
  workflow
    .command("deny")
    .description("Deny a workflow's approval step (the run fails, unless the step continues on denial)")
    .argument("<id>", "the workflow run id (see arbor workflows)")
    .argument("<step>", "the approval step's id")
    .requiredOption("--reason <text>", "why (kept in the log)")
    .action(async (id: string, step: string, flags: { reason: string }) => {
      const { workflowDecideAction } = await loadActions();
      await workflowDecideAction(id, step, "denied", flags.reason, globals());
    });
  workflow
    .command("abort")
    .description("End a workflow run that no process drives (suspended or crashed): its approvals are closed")
    .argument("<id>", "the workflow run id")
    .option("--reason <text>", "why")
    .action(async (id: string, flags: { reason?: string }) => {
      const { workflowAbortAction } = await loadActions();
      await workflowAbortAction(id, flags.reason, globals());
    });
  program
    .command("workflows")
    .description("List workflow runs and their states")
    .option("--json", "one JSON object per line")
    .action(async (flags: { json?: boolean }) => {
      const { workflowsAction } = await loadActions();
      await workflowsAction(flags, globals());
    });
}

/**
 * `arbor workflow run <file>`, `arbor workflow approve|deny <id> <step>`, `arbor workflow abort
 * <id>` and `arbor workflows`: workflows from the command line; the bodies are in
 * `workflow-actions.ts`, loaded lazily.
 *
 * Contract (ours):
 * - `workflow run <file>` imports the module (its default export, or an export named `workflow`,
 *   must be a `defineWorkflow` workflow), reads the input from `--input <json>` (default
 *   `{}`), and runs it over the CLI's log with the model flags' model as the harness's model;
 *   `--resume <id>` goes on with run `<id>` instead (after a crash or a decision) with the
 *   endpoint the run recorded (model, base URL, API, folder: in its driver session
 *   `workflow-cli-<id>`; flags given again win, the key comes from the environment); `--id` names
 *   a new run. It prints `workflow <id>` on stderr first;
 * - the outcome: `done` prints the output as JSON on stdout, exit 0; `suspended` prints each
 *   waiting approval (`<id> <step> awaiting-approval <message>`) and exits 3 (decide with
 *   `arbor workflow approve|deny`, then `--resume <id>`); `failed` / `aborted` exit 1 naming why;
 *   Ctrl-C aborts the run (its agents are aborted, its approvals closed);
 * - `workflows` lists every run, newest first: `<id> <name> <status> <steps ended>/<steps>
 *   <updated>` and the waiting approvals; `--json` prints JSON lines;
 * - `approve` / `deny` record a decision (the rules of `arbor approve`: repeated = "unchanged",
 *   exit 0; unknown, settled or conflicting = exit 1, nothing written); `abort` ends a run that
 *   no process drives.
 *
 * @example
 * ```sh
 * arbor workflow run release.mjs --input '{"version":"1.4.2"}'   # exits 3 at the approval step
 * arbor workflows
 * arbor workflow approve 0193… publish --reason "release window"
 * arbor workflow run release.mjs --resume 0193…
 * ```
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

/** The bodies of the workflow commands (contract: `workflow-commands.ts`). */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ApprovalConflictError, ApprovalNotFoundError, SessionNotFoundError } from "../../core/errors.ts";
import { isWorkflow, type Workflow } from "../../workflows/define-workflow.ts";
import { WorkflowRunError } from "../../workflows/errors.ts";
import { abortWorkflowRun, decideWorkflowApproval, listWorkflowRuns, readWorkflowRun } from "../../workflows/runs.ts";
import type { WorkflowRunState } from "../../workflows/fold.ts";
import { createCliHarness } from "../agent-setup.ts";
import { CliError, rethrowRefusal } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets, type ModelFlags } from "../config.ts";
import { recordEndpoint, recordedEndpoint, withStore, type StoreFlags } from "../store-context.ts";
import type { ApprovalDecision } from "../../core/vocabulary.ts";

async function loadWorkflow(file: string): Promise<Workflow> {
  const path = resolve(file);
  if (!existsSync(path)) throw new CliError(`Workflow module ${path} does not exist.`);
  const module = (await import(pathToFileURL(path).href)) as { default?: unknown; workflow?: unknown };
  const workflow = isWorkflow(module.default) ? module.default : module.workflow;
  if (!isWorkflow(workflow)) throw new CliError(`${path} exports no workflow: its default export (or "workflow") must be a defineWorkflow(...) value.`);
  return workflow;
}

function parseInput(text: string | undefined): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`--input is not JSON (${(error as Error).message}): ${text}`);
  }
}

function waitingLines(run: WorkflowRunState | undefined, pending: string[]): string[] {
  return pending.map((stepId) => `${run?.workflowId ?? ""} ${stepId} awaiting-approval ${run?.gates.get(stepId) ? (gateMessage(run, stepId) ?? "") : ""}`.trimEnd());
}

function gateMessage(run: WorkflowRunState, stepId: string): string | undefined {
  return run.gates.get(stepId)?.message;
}

/** The CLI's session for workflow run `workflowId`: it records the endpoint the run uses. */
const driverSessionId = (workflowId: string) => `workflow-cli-${workflowId}`;

/** `arbor workflow run <file>`. */
export async function workflowRunAction(file: string, flags: ModelFlags & { input?: string; resume?: string; id?: string; cwd?: string }, globals: StoreFlags, exit: { code: number }): Promise<void> {
  const workflow = await loadWorkflow(file);
  const input = parseInput(flags.input);
  await withStore(globals, {}, async (store) => {
    const workflowId = flags.resume ?? flags.id ?? crypto.randomUUID();
    // One driver session per workflow run holds the endpoint it ran with (model, base URL, API;
    // no key), so `--resume` needs no model flags again, as `arbor run --continue` does not.
    const driverId = driverSessionId(workflowId);
    const driver = await store.repo.open(driverId).catch((error: unknown) => {
      if (SessionNotFoundError.isInstance(error)) return undefined;
      throw error;
    });
    const settings = resolveModelSettings(flags, process.env, driver ? recordedEndpoint(driver) : {});
    store.addSecrets(settingsSecrets(settings));
    const cwd = resolve(flags.cwd ?? driver?.view.info.cwd ?? process.cwd());
    if (!driver) await store.repo.create({ id: driverId, cwd });
    const { harness } = await createCliHarness({ store, sessionId: driverId, cwd, settings, contextFiles: false });
    await recordEndpoint(harness.session, settings);
    const controller = new AbortController();
    const onSignal = () => controller.abort(new Error("interrupted by the user (Ctrl-C)"));
    process.once("SIGINT", onSignal);
    try {
      const options = { harness, cwd, signal: controller.signal };
      let outcome;
      try {
        if (flags.resume !== undefined) {
          process.stderr.write(`workflow ${flags.resume} (resumed)\n`);
          outcome = await workflow.resume(flags.resume, options);
        } else {
          process.stderr.write(`workflow ${workflowId}\n`);
          outcome = await workflow.run(input as never, { ...options, workflowId });
        }
      } catch (error) {
        if (WorkflowRunError.isInstance(error)) throw new CliError(error.message, 1);
        throw error;
      }
      if (outcome.status === "done") {
        process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
      } else if (outcome.status === "suspended") {
        const run = await readWorkflowRun(store.repo.log, outcome.workflowId);
        for (const line of waitingLines(run, outcome.pendingApprovals)) process.stdout.write(`${line}\n`);
        process.stderr.write(`decide with: arbor workflow approve ${outcome.workflowId} <step> (or deny), then: arbor workflow run ${file} --resume ${outcome.workflowId}\n`);
        exit.code = 3;
      } else if (outcome.status === "failed") {
        process.stderr.write(`workflow ${outcome.workflowId} failed${outcome.error.stepId ? ` at step ${outcome.error.stepId}` : ""} (${outcome.error.reason}): ${outcome.error.message}\n`);
        exit.code = 1;
      } else {
        process.stderr.write(`workflow ${outcome.workflowId} aborted${outcome.reason ? `: ${outcome.reason}` : ""}\n`);
        exit.code = 1;
      }
    } finally {
      process.off("SIGINT", onSignal);
      await harness.close();
    }
  });
}

/** `arbor workflows`. */
export async function workflowsAction(flags: { json?: boolean }, globals: StoreFlags): Promise<void> {
  await withStore(globals, { mustExist: true }, async (store) => {
    const runs = await listWorkflowRuns(store.repo.log);
    for (const run of runs) {
      const ended = [...run.steps.values()].filter((step) => step.ended).length;
      const total = run.stepIds.length;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ workflowId: run.workflowId, workflow: run.workflow, status: run.status, stepsEnded: ended, steps: total, startedAt: run.startedAt, updatedAt: run.updatedAt, pendingApprovals: run.pendingApprovals })}\n`);
      } else {
        const waiting = run.pendingApprovals.length ? ` waiting: ${run.pendingApprovals.join(", ")}` : "";
        process.stdout.write(`${run.workflowId} ${run.workflow} ${run.status} ${ended}/${total} ${run.updatedAt}${waiting}\n`);
      }
    }
    if (runs.length === 0 && !flags.json) process.stdout.write("No workflow runs.\n");
  });
}

/** `arbor workflow approve` / `deny`. */
export async function workflowDecideAction(id: string, stepId: string, status: ApprovalDecision, reason: string | undefined, globals: StoreFlags): Promise<void> {
  await withStore(globals, { mustExist: true }, async (store) => {
    try {
      const result = await decideWorkflowApproval(store.repo.log, id, stepId, { status, ...(reason !== undefined ? { reason } : {}) });
      process.stdout.write(`${id} ${stepId} ${status}${result.changed ? "" : " (unchanged: already recorded)"}\n`);
      process.stderr.write(`go on with: arbor workflow run <file> --resume ${id}\n`);
    } catch (error) {
      rethrowRefusal(error, [ApprovalNotFoundError, ApprovalConflictError]);
    }
  });
}

/** `arbor workflow abort`. */
export async function workflowAbortAction(id: string, reason: string | undefined, globals: StoreFlags): Promise<void> {
  await withStore(globals, { mustExist: true }, async (store) => {
    try {
      const run = await abortWorkflowRun(store.repo.log, id, reason);
      process.stdout.write(`${id} ${run.status}\n`);
    } catch (error) {
      rethrowRefusal(error, [ApprovalNotFoundError]);
    }
  });
}

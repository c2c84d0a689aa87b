/**
 * The body of `arbor worker` (registered in `worker.ts`), and the worker every `arbor serve`
 * with a model runs beside its HTTP service.
 *
 * Contract (ours):
 * - the worker claims tasks from the log (`task.queued` by `harness.start`, background and
 *   scheduled prompts) and runs each with the CLI's harness on that task's session (coding tools
 *   bound to `--cwd`, the key redacted from the log), `--concurrency` at once (default 4);
 * - it serves every tenant of the log: each session runs in its own tenant; its sessions continue
 *   interrupted runs (durability `continue`), and it continues runs whose process died and runs
 *   whose approvals were all decided (`docs/durability.md`, "Running a fleet");
 * - prints one line `arbor worker: <id> ...` on stderr once it follows the queue; SIGINT or
 *   SIGTERM stop claiming, let the running tasks end, close the log, then the command returns.
 *
 * @example
 * ```ts
 * await workerAction({ model: "openai:gpt-4o-mini", concurrency: "8" }, { db: "postgres://app@db/arbor" });
 * ```
 */
import { existsSync } from "node:fs";
import { harnessWorkerSession } from "../../harness/worker.ts";
import { startTaskWorker, type TaskWorker } from "../../harness/task-worker.ts";
import { createCliHarness } from "../agent-setup.ts";
import { CliError } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets, type ResolvedModelSettings } from "../config.ts";
import { openStore, type CliStore } from "../store-context.ts";
import { approvalFlag } from "./model-actions.ts";
import type { ToolFlags } from "../tool-flags.ts";
import type { WorkerFlags } from "./worker.ts";

/**
 * Starts the CLI's worker over `store` (see the module contract); `arbor serve` calls it too.
 *
 * @example
 * ```ts
 * const worker = startCliWorker({ store, settings, cwd: process.cwd(), tools: flags });
 * ```
 */
export function startCliWorker(input: {
  store: CliStore;
  settings: ResolvedModelSettings;
  cwd: string;
  tools: ToolFlags;
  concurrency?: number;
  requireApproval?: readonly string[] | "all";
  /** Also continue runs whose process died and runs whose approvals were all decided (default true). */
  continueRuns?: boolean;
}): TaskWorker {
  const { store, settings, cwd, tools, requireApproval } = input;
  return startTaskWorker({
    log: store.repo.log,
    open: async (sessionId) =>
      harnessWorkerSession((await createCliHarness({ store, sessionId, cwd, settings, tools, durability: "continue", ...(requireApproval ? { requireApproval } : {}) })).harness),
    continueRuns: input.continueRuns ?? true,
    ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
    onError: (error) => process.stderr.write(`arbor worker: ${error instanceof Error ? error.message : String(error)}\n`),
  });
}

/** Resolves at the first SIGINT or SIGTERM, then stops listening (how `arbor worker` and `arbor serve` wait). */
export function untilStopSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** `arbor worker`. */
export async function workerAction(flags: WorkerFlags, globals: { db?: string; tenant?: string }): Promise<void> {
  const concurrency = Number(flags.concurrency ?? "4");
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new CliError(`Bad --concurrency "${flags.concurrency}": expected a whole number of 1 or more.`);
  const settings = resolveModelSettings(flags, process.env);
  if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
  const cwd = flags.cwd ?? process.cwd();
  if (!existsSync(cwd)) throw new CliError(`--cwd "${cwd}" does not exist.`);
  const store = openStore(globals, { allTenants: true });
  try {
    store.addSecrets(settingsSecrets(settings));
    const requireApproval = approvalFlag(flags.approve);
    const worker = startCliWorker({ store, settings, cwd, tools: flags, concurrency, ...(requireApproval ? { requireApproval } : {}) });
    process.stderr.write(`arbor worker: ${worker.id} (model ${settings.spec.provider}:${settings.spec.modelId}; ${concurrency} at once; log ${store.dbPath})\n`);
    await untilStopSignal();
    await worker.close();
  } finally {
    await store.close();
  }
}

/**
 * The body of `arbor worker`, also run beside every `arbor serve` with a model: claims tasks from the log and runs each with the CLI's harness on its
 * session and tenant (`--concurrency`, default 4), in the folder the session recorded (`session-folders.ts`; `--cwd` only for a session that
 * recorded none), continuing orphaned and decided runs (`docs/durability.md`). A task whose session's folder is gone ends `failed`
 * (`SESSION_FOLDER_MISSING`); such a run is left for a process that has the folder, said once on stderr. SIGINT/SIGTERM let running tasks end.
 */
import { existsSync } from "node:fs";
import { harnessWorkerSession, sharedWorkerSession } from "../../harness/worker.ts";
import type { HarnessSession } from "../../harness/harness-session-types.ts";
import { startTaskWorker, type TaskWorker } from "../../harness/task-worker.ts";
import { openSessionHarness, SessionFolderMissingError } from "../session-folders.ts";
import { CliError } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets, type ResolvedModelSettings } from "../config.ts";
import { openStore, type CliStore } from "../store-context.ts";
import { approvalFlag } from "./model-actions.ts";
import type { ToolFlags } from "../tool-flags.ts";
import type { WorkerFlags } from "./worker.ts";
import type { HarnessBudget } from "../../harness/budget-options.ts";

/** Starts the CLI's worker over `store` (see the module contract); `arbor serve` calls it too. */
export function startCliWorker(input: {
  store: CliStore;
  settings: ResolvedModelSettings;
  /** The folder of a session that recorded none (`--cwd`); every other session works in its recorded folder. */
  cwd: string;
  tools: ToolFlags;
  concurrency?: number;
  requireApproval?: readonly string[] | "all";
  /** Also continue runs whose process died and runs whose approvals were all decided (default true). */
  continueRuns?: boolean;
  /**
   * Open the sessions here instead of a harness per session: `arbor serve` passes its HTTP
   * service's, so the worker and the requests share one live session per id.
   */
  sessions?: { open(sessionId: string): Promise<HarnessSession> };
  /** Budgets of the runs it starts or continues (`docs/budgets.md`). */
  budget?: HarnessBudget;
}): TaskWorker {
  const { store, settings, cwd, tools, requireApproval, budget, sessions } = input;
  const continueRuns = input.continueRuns ?? true;
  /** Sessions whose missing folder was reported: a run left open there is looked at again every sweep, and said once. */
  const reported = new Set<string>();
  return startTaskWorker({
    log: store.repo.log,
    open: sessions
      ? async (sessionId) => sharedWorkerSession(await sessions.open(sessionId), { resume: continueRuns })
      : async (sessionId) =>
          harnessWorkerSession(await openSessionHarness({ store, fallbackCwd: cwd, settings, tools, durability: "continue", ...(requireApproval ? { requireApproval } : {}), ...(budget ? { budget } : {}) }, sessionId)),
    continueRuns,
    ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
    onError: (error) => {
      if (SessionFolderMissingError.isInstance(error)) {
        const sessionId = String(error.details.sessionId);
        if (reported.has(sessionId)) return;
        reported.add(sessionId);
      }
      process.stderr.write(`arbor worker: ${error instanceof Error ? error.message : String(error)}\n`);
    },
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
    // Refused at start, not at the first task: a wrong key, or an encrypted store without ARBOR_ENCRYPTION_KEY.
    await store.ready();
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

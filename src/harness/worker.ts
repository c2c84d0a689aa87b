/**
 * `createWorker(options)`: a fleet process that runs the work no request waits on, background (`harness.start`) and scheduled (`startAt`) prompts,
 * claimed from the shared log (`docs/durability.md`, "A fleet"). Options are the harness's plus `eventLog` (required) and the worker's own; they are
 * validated at once (`HarnessConfigError`). Each task opens its session, runs, logs `task.ended` and closes; `close()` waits for running tasks.
 */
import { HarnessConfigError } from "../core/errors.ts";
import type { EventLog } from "../store/event-log.ts";
import { createHarness, type AgentHarness } from "./create-harness.ts";
import type { HarnessSession } from "./harness-session-types.ts";
import { validateHarnessOptions, type AgentHarnessOptions } from "./options.ts";
import { startTaskWorker, type TaskWorker, type WorkerSession } from "./task-worker.ts";

/** Options of {@link createWorker}: the harness's, the shared log, and the worker's own. */
export interface WorkerOptions extends Omit<AgentHarnessOptions, "session" | "sessionId" | "repository" | "eventLogPath" | "eventLog"> {
  /** The log the fleet shares. */
  eventLog: EventLog;
  /** Tasks run at once in this worker (default 4). */
  concurrency?: number;
  /** How often due scheduled prompts and dead claims are looked for, in ms (default 1000). */
  sweepIntervalMs?: number;
  /** Wait before a task given back (its session was busy elsewhere) is tried again here, in ms (default 1000). */
  retryDelayMs?: number;
  /** The worker's id in `task.claimed` (default `<host>:<pid>:<random>`). */
  id?: string;
  /** Errors no caller can receive (a failed `task.ended` append, a lost subscription); default: a process warning `ARBOR_WORKER`. */
  onError?(error: unknown): void;
}

/** A running worker. */
export type Worker = TaskWorker;

function checkCount(field: string, value: unknown, min: number): void {
  if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < min)) {
    throw new HarnessConfigError(`Invalid worker option "${field}": expected an integer ≥ ${min}, got ${JSON.stringify(value)}.`, { details: { field } });
  }
}

/**
 * A harness opened on one session, as the worker loop needs it (`startTaskWorker`'s `open`); `resume` when the harness can continue an interrupted
 * run (durability `continue`). `close` closes the harness.
 */
export function harnessWorkerSession(harness: AgentHarness): WorkerSession {
  return {
    prompt: (input) => harness.prompt(input),
    resume: (reason) => harness.resume(harness.id, { reason }),
    continue: () => harness.continue(),
    close: () => harness.close(),
  };
}

/**
 * A session that requests use too, as the worker loop needs it (`arbor serve`: the worker runs
 * in the sessions its HTTP service opens, so one process never holds two live copies of a
 * session). `resume` only when the session continues interrupted runs (durability `continue`);
 * `close` leaves the session open: whoever opened it (the service) closes it.
 */
export function sharedWorkerSession(session: HarnessSession, options: { resume: boolean }): WorkerSession {
  return {
    prompt: (input) => session.prompt(input),
    ...(options.resume ? { resume: (reason: string) => session.resumeRun({ reason }) } : {}),
    continue: () => session.continue(),
    close: () => Promise.resolve(),
  };
}

/**
 * Starts a worker (see the module contract).
 * @throws HarnessConfigError for a bad option (no `eventLog`, a bad `concurrency`, any harness option).
 * @example
 * const worker = createWorker({ eventLog, models: { main: model }, concurrency: 8 });
 * await worker.close();
 */
export function createWorker(options: WorkerOptions): Worker {
  const { eventLog, concurrency, sweepIntervalMs, retryDelayMs, id, onError, ...harnessOptions } = options ?? ({} as WorkerOptions);
  if (!eventLog || typeof eventLog.subscribe !== "function") {
    throw new HarnessConfigError('Invalid worker option "eventLog": a worker needs the event log the fleet shares (createPostgresEventLog or createSqliteEventLog).', { details: { field: "eventLog" } });
  }
  checkCount("concurrency", concurrency, 1);
  checkCount("sweepIntervalMs", sweepIntervalMs, 1);
  checkCount("retryDelayMs", retryDelayMs, 0);
  validateHarnessOptions({ ...harnessOptions, eventLog });
  return startTaskWorker({
    log: eventLog,
    open: async (sessionId, tenant) => {
      const scope = harnessOptions.tenant ?? tenant;
      return harnessWorkerSession(await createHarness({ ...harnessOptions, eventLog, sessionId, ...(scope !== undefined ? { tenant: scope } : {}) }));
    },
    continueRuns: harnessOptions.durability === "continue",
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(sweepIntervalMs !== undefined ? { sweepIntervalMs } : {}),
    ...(retryDelayMs !== undefined ? { retryDelayMs } : {}),
    ...(id !== undefined ? { id } : {}),
    ...(harnessOptions.tenant !== undefined ? { tenant: harnessOptions.tenant } : {}),
    ...(harnessOptions.leaseTtlMs !== undefined ? { leaseTtlMs: harnessOptions.leaseTtlMs } : {}),
    ...(onError ? { onError } : {}),
  });
}

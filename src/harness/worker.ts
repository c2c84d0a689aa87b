/**
 * `createWorker(options)`: a process of the fleet that runs the work no request is waiting on
 * (ours): background prompts (`harness.start`) and scheduled prompts (`startAt`), claimed from the
 * log by any worker that shares it (`docs/durability.md`, "A fleet").
 *
 * Contract:
 * - `options` are the harness's (`createHarness`: models, tools, hooks, resources, ...) plus
 *   `eventLog` (required: the log the fleet shares, PostgreSQL across hosts or one SQLite file
 *   on one host) and the worker's own `concurrency`, `sweepIntervalMs`, `retryDelayMs`, `id`;
 *   they are validated at once (`HarnessConfigError` naming the field), and no session is created;
 * - each claimed task opens its session with those options (`createHarness({ ...options,
 *   sessionId })`, crash recovery included), runs the prompt, logs `task.ended`, and closes the
 *   session; the claim protocol, retries and ordering are `task-worker.ts`'s;
 * - `tenant` limits the worker to that tenant's tasks; without it the worker serves every tenant,
 *   each session opened in its own tenant;
 * - `close()` stops claiming and resolves once the running tasks ended; the log is the caller's.
 *
 * @example
 * ```ts
 * const eventLog = createPostgresEventLog({ connectionString: process.env.DATABASE_URL! });
 * const worker = createWorker({ eventLog, models: { main: createOpenAIModel({ modelId: "gpt-4o-mini" }) }, tools });
 * process.on("SIGTERM", () => void worker.close().then(() => eventLog.close()));
 * ```
 */
import { HarnessConfigError } from "../core/errors.ts";
import type { EventLog } from "../store/event-log.ts";
import { createHarness, type AgentHarness } from "./create-harness.ts";
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
 * A harness opened on one session, as the worker loop needs it (`startTaskWorker`'s `open`);
 * `resume` when the harness can continue an interrupted run (durability `continue`). `close`
 * closes the harness.
 *
 * @example
 * ```ts
 * startTaskWorker({ log, open: async (id) => harnessWorkerSession(await createHarness({ ...options, eventLog: log, sessionId: id })) });
 * ```
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
 * Starts a worker (see the module contract).
 *
 * @throws HarnessConfigError for a bad option (no `eventLog`, a bad `concurrency`, any harness option).
 * @example
 * ```ts
 * const worker = createWorker({ eventLog, models: { main: model }, concurrency: 8 });
 * await worker.close();
 * ```
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
    ...(onError ? { onError } : {}),
  });
}

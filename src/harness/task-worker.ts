/**
 * The worker loop of a fleet (ours): follows the task queue in the log, claims due tasks and
 * runs them through sessions it opens, with no request. `createWorker` (`worker.ts`) and the CLI
 * (`arbor worker`, `arbor serve`) build it; this module knows nothing of models or tools.
 *
 * Contract:
 * - the queue is a subscription to the log's task events (`log.subscribe({ types })`): catch-up
 *   from the start, then live, woken by LISTEN/NOTIFY on PostgreSQL and by polling on SQLite; a
 *   sweep every `sweepIntervalMs` (default 1000) finds due scheduled tasks and dead claims, and a
 *   timer wakes the worker at the next `startAt`;
 * - a task is due when `startAt` has passed, it has no live claim, and no earlier due task of the
 *   same session waits (one session's tasks start in queue order, one at a time); at most
 *   `concurrency` tasks (default 4) run at once in one worker;
 * - a claimed task runs as `open(sessionId).prompt(input)`; its `task.ended` carries the run's
 *   status and id. A task taken over from a dead claim first looks for the run that claim
 *   started (`linkedRun`): an ended run ends the task with its status, nothing re-run; an open
 *   one is continued with `resume()` when the session offers it, else (durability `interrupt`)
 *   opening the session closes it as `interrupted`, and so ends the task;
 * - a session busy in another process, or an append the log refused (another writer, a lost
 *   lock, the log unreachable), releases the claim (`task.released`) and the task waits
 *   `retryDelayMs` (default 1000) in this worker; a deleted session ends it `failed`
 *   (`SESSION_NOT_FOUND`); any other error ends it `failed` with the error's code;
 * - when the sessions it opens can continue runs (`resume`, durability `continue`), the worker
 *   also follows the runs in the log (`open-runs.ts`) and, with spare capacity, continues a run
 *   whose process is gone (`resume()`, whose `run.resumed` is the claim: a run a live lease holds
 *   is refused with `RUN_OWNED` and tried again later) and a run stopped for approval once every
 *   gated call is decided (`continue()`, whose `resume` run is the claim);
 * - `close()` stops claiming and resolves once the running tasks ended; it never closes the log.
 *
 * @example
 * ```ts
 * const worker = startTaskWorker({ log, open: async (id) => { const h = await createHarness({ ...options, eventLog: log, sessionId: id }); return { prompt: (input) => h.prompt(input), close: () => h.close() }; } });
 * await worker.close();
 * ```
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Subscription } from "rxjs";
import { ArborError, SessionBusyError, SessionNotFoundError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { RunOutcome } from "../machines/agent-types.ts";
import type { EventLog, NewEvent } from "../store/event-log.ts";
import { isEventOfType, type ArborEventData } from "../store/events/catalogue.ts";
import { foldTask, TASK_EVENT_TYPES, type TaskState } from "../store/task-queue.ts";
import { foldOpenRun, isRunOrphaned, OPEN_RUN_EVENT_TYPES, type OpenRun } from "./open-runs.ts";
import { claimTask, isClaimLive, linkedRun, releaseHold, type ClaimedTask } from "./task-claims.ts";

/** A session a worker opened to run a task in. */
export interface WorkerSession {
  prompt(input: string | AgentMessage[]): Promise<RunOutcome>;
  /** Continues the session's interrupted run from the log (durability `continue`), when available; `reason` goes to `run.resumed`. */
  resume?(reason: string): Promise<RunOutcome>;
  /** Continues after approval decisions (a run stopped for approval), when available. */
  continue?(): Promise<RunOutcome>;
  /** Closes what `open` opened (flushes, then releases the session). */
  close(): Promise<void>;
}

/** Options of {@link startTaskWorker}. */
export interface TaskWorkerOptions {
  log: EventLog;
  /** Opens session `sessionId` (of `tenant`; undefined: whichever tenant it belongs to) for one task or continuation. */
  open(sessionId: string, tenant?: string): Promise<WorkerSession>;
  /** The worker's id in `task.claimed` (default `<host>:<pid>:<random>`). */
  id?: string;
  /** Tasks run at once (default 4). */
  concurrency?: number;
  /** Sweep for due scheduled tasks and dead claims, in ms (default 1000). */
  sweepIntervalMs?: number;
  /** Wait before a released task is tried again here, in ms (default 1000). */
  retryDelayMs?: number;
  /** Also continue orphaned runs and decided approvals (default: when the opened sessions offer `resume`; set by the caller). */
  continueRuns?: boolean;
  /** Only this tenant's tasks (default: every tenant). */
  tenant?: string;
  /** Called with errors the worker cannot give to a caller (default: a process warning). */
  onError?(error: unknown): void;
}

/** A running worker. */
export interface TaskWorker {
  readonly id: string;
  /** The tasks running in this worker now. */
  running(): number;
  /** Stops claiming; resolves once the running tasks ended. Idempotent. */
  close(): Promise<void>;
}

type Ending = Omit<ArborEventData<"task.ended">, "taskId" | "attempt">;

/** Codes of a refusal by the log: the task is given back, not failed. */
const RELEASE_CODES = new Set(["SESSION_BUSY", "EXPECTED_VERSION_CONFLICT", "LOG_COMMIT_FAILED", "LOG_CLOSED", "RUN_OWNED"]);
/** Codes of a continuation that is not (or no longer) this worker's to make. */
const NOT_OURS = new Set(["SESSION_BUSY", "RUN_OWNED", "NOTHING_TO_RESUME", "APPROVAL_PENDING", "EXPECTED_VERSION_CONFLICT", "SESSION_NOT_FOUND"]);

function codeOf(error: unknown): string | undefined {
  return ArborError.isInstance(error) ? error.code : undefined;
}

/**
 * Starts a worker (see the module contract).
 *
 * @example
 * ```ts
 * const worker = startTaskWorker({ log, open, concurrency: 8 });
 * ```
 */
export function startTaskWorker(options: TaskWorkerOptions): TaskWorker {
  const { log } = options;
  const id = options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const concurrency = options.concurrency ?? 4;
  const sweepMs = options.sweepIntervalMs ?? 1000;
  const retryMs = options.retryDelayMs ?? 1000;
  const report = options.onError ?? ((error: unknown) => process.emitWarning(error instanceof Error ? error : new Error(String(error)), { code: "ARBOR_WORKER" }));
  const tasks = new Map<string, TaskState>();
  const notBefore = new Map<string, number>();
  const running = new Map<string, Promise<void>>();
  const busySessions = new Set<string>();
  let closed = false;
  let closing: Promise<void> | undefined;
  let position = 0;
  let subscription: Subscription | undefined;
  let runSubscription: Subscription | undefined;
  let runPosition = 0;
  let runs = new Map<string, OpenRun>();
  const runNotBefore = new Map<string, number>();
  let wakeTimer: NodeJS.Timeout | undefined;
  let pumping = false;
  let again = false;

  const follow = (): void => {
    subscription = log.subscribe({ types: TASK_EVENT_TYPES, fromPosition: position }).subscribe({
      next(event) {
        position = event.globalPosition;
        if (!isEventOfType(event, ...TASK_EVENT_TYPES)) return;
        const { taskId } = event.data;
        const next = foldTask(tasks.get(taskId), event);
        if (!next || next.ended) {
          tasks.delete(taskId);
          notBefore.delete(taskId);
        } else tasks.set(taskId, next);
        wake();
      },
      error(error) {
        report(error);
        if (!closed) setTimeout(follow, retryMs).unref();
      },
    });
  };

  const followRuns = (): void => {
    runSubscription = log.subscribe({ types: OPEN_RUN_EVENT_TYPES, fromPosition: runPosition }).subscribe({
      next(event) {
        runPosition = event.globalPosition;
        const next = foldOpenRun(runs, event);
        if (next !== runs) {
          runs = next;
          wake();
        }
      },
      error(error) {
        report(error);
        if (!closed) setTimeout(followRuns, retryMs).unref();
      },
    });
  };

  const wake = (): void => {
    if (closed) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    void (async () => {
      try {
        do {
          again = false;
          await pass();
        } while (again && !closed);
      } catch (error) {
        report(error);
      } finally {
        pumping = false;
      }
    })();
  };

  const pass = async (): Promise<void> => {
    const now = Date.now();
    let nextDue = Number.POSITIVE_INFINITY;
    const waiting = new Set<string>();
    for (const task of [...tasks.values()]) {
      if (closed || running.size >= concurrency) break;
      if (options.tenant !== undefined && (task.tenant ?? "default") !== options.tenant) continue;
      if (running.has(task.taskId)) continue;
      const due = Math.max(task.startAt, notBefore.get(task.taskId) ?? 0);
      if (due > now) {
        nextDue = Math.min(nextDue, due);
        continue;
      }
      if (waiting.has(task.sessionId) || busySessions.has(task.sessionId)) continue;
      waiting.add(task.sessionId);
      if (task.claim && (await isClaimLive(log, task))) continue;
      const claimed = await claimTask(log, task, id);
      if (claimed) execute(claimed);
    }
    if (options.continueRuns) await passRuns(now);
    if (wakeTimer) clearTimeout(wakeTimer);
    wakeTimer = Number.isFinite(nextDue) ? setTimeout(wake, Math.max(0, nextDue - Date.now()) + 5) : undefined;
  };

  const passRuns = async (now: number): Promise<void> => {
    // A session with a due task is the task's: its claim continues the run first.
    const tasked = new Set([...tasks.values()].filter((task) => task.startAt <= now).map((task) => task.sessionId));
    for (const run of [...runs.values()]) {
      if (closed || running.size >= concurrency) return;
      if (busySessions.has(run.sessionId) || tasked.has(run.sessionId) || (runNotBefore.get(run.sessionId) ?? 0) > now) continue;
      const ready = run.status === "suspended" ? run.waiting.length === 0 : await isRunOrphaned(log, run);
      if (ready) continueRun(run);
    }
  };

  /** Continues `run` in a session opened here; the continuation's first event is the claim. */
  const continueRun = (run: OpenRun): void => {
    busySessions.add(run.sessionId);
    const key = `run:${run.sessionId}`;
    const work = (async () => {
      let session: WorkerSession | undefined;
      try {
        session = await options.open(run.sessionId);
        if (run.status === "open" && session.resume) await session.resume(`Worker ${id} found the run's process gone and continued it from the log.`);
        else if (run.status === "suspended" && session.continue) await session.continue();
      } catch (error) {
        runNotBefore.set(run.sessionId, Date.now() + retryMs);
        if (!NOT_OURS.has(codeOf(error) ?? "")) report(error);
      } finally {
        await session?.close().catch(report);
      }
    })().finally(() => {
      running.delete(key);
      busySessions.delete(run.sessionId);
      wake();
    });
    running.set(key, work);
  };

  const execute = (claimed: ClaimedTask): void => {
    const { task } = claimed;
    busySessions.add(task.sessionId);
    const work = (async () => {
      const ending = await runClaimed(claimed).catch((error: unknown): Ending | "release" =>
        RELEASE_CODES.has(codeOf(error) ?? "") ? "release" : { status: "failed", code: codeOf(error) ?? "WORKER_ERROR", error: error instanceof Error ? error.message : String(error) },
      );
      const event: NewEvent =
        ending === "release"
          ? { type: "task.released", data: { taskId: task.taskId, attempt: claimed.attempt, reason: "the session is busy in another process, or the log refused a write" } }
          : { type: "task.ended", data: { taskId: task.taskId, attempt: claimed.attempt, ...ending } };
      if (ending === "release") notBefore.set(task.taskId, Date.now() + retryMs);
      try {
        await log.append(task.streamId, [{ ...event, metadata: { sessionId: task.sessionId } }]);
      } catch (error) {
        report(error);
      } finally {
        await releaseHold(claimed).catch(report);
      }
    })().finally(() => {
      running.delete(task.taskId);
      busySessions.delete(task.sessionId);
      wake();
    });
    running.set(task.taskId, work);
  };

  const runClaimed = async (claimed: ClaimedTask): Promise<Ending | "release"> => {
    const { task } = claimed;
    const linked = claimed.previous ? await linkedRun(log, task.sessionId, claimed.previous) : undefined;
    if (linked?.status) return { status: linked.status, runId: linked.runId };
    let session: WorkerSession;
    try {
      session = await options.open(task.sessionId, task.tenant ?? "default");
    } catch (error) {
      if (SessionNotFoundError.isInstance(error)) return { status: "failed", code: error.code, error: error.message };
      throw error;
    }
    try {
      let outcome: RunOutcome;
      if (linked) {
        if (!session.resume) return { status: "interrupted", runId: linked.runId };
        try {
          outcome = await session.resume(`Worker ${id} took over task ${task.taskId} from a process that died (claim ${claimed.previous!.attempt}).`);
        } catch (error) {
          if (codeOf(error) !== "NOTHING_TO_RESUME") throw error;
          // Opening the session ended the run (durability `interrupt`): the task ends as it did.
          const after = await linkedRun(log, task.sessionId, claimed.previous!);
          return { status: after?.status ?? "interrupted", runId: linked.runId };
        }
      } else {
        // A run the session's last process left open is continued first (or joined, when opening
        // the session already continues it); the prompt follows once it ended.
        if (session.resume) {
          await session.resume(`Worker ${id} found the run's process gone and continued it before task ${task.taskId}.`).catch((error: unknown) => {
            if (codeOf(error) !== "NOTHING_TO_RESUME") throw error;
          });
        }
        outcome = await session.prompt(task.input);
      }
      if (outcome.status === "failed" && RELEASE_CODES.has(outcome.code ?? "")) return "release";
      return {
        status: outcome.status,
        runId: outcome.runId,
        ...(outcome.code !== undefined ? { code: outcome.code } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      };
    } catch (error) {
      if (SessionBusyError.isInstance(error)) return "release";
      throw error;
    } finally {
      await session.close().catch(report);
    }
  };

  follow();
  if (options.continueRuns) followRuns();
  const sweep = setInterval(wake, sweepMs);

  return {
    id,
    running: () => running.size,
    close() {
      closing ??= (async () => {
        closed = true;
        clearInterval(sweep);
        if (wakeTimer) clearTimeout(wakeTimer);
        subscription?.unsubscribe();
        runSubscription?.unsubscribe();
        while (pumping) await new Promise((resolve) => setTimeout(resolve, 10));
        await Promise.allSettled([...running.values()]);
      })();
      return closing;
    },
  };
}

/**
 * The worker loop of a fleet: follows the task events of the log, claims due tasks (no live claim, no earlier due task of the same session) and
 * runs at most `concurrency` at once through sessions it opens. A re-claimed task first looks for the run an earlier claim started. A busy session
 * or refused append, or a lost connection to the log, releases the claim and retries after `retryDelayMs`; other errors end the task `failed`. A task's ending is appended at the
 * version of the claim that ran it, so a worker whose claim another worker took over never ends the task. With durability `continue` it also
 * continues orphaned and decided-approval runs (`open-runs.ts`), a decided one only after `DECIDED_GRACE_MS`. A task whose prompt was shredded with
 * its deleted session (`SHREDDED_PROMPT`) ends `failed` (`DATA_KEY_UNAVAILABLE`) without a run. `close()` never closes the log.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Subscription } from "rxjs";
import { ArborError, ExpectedVersionConflictError, SessionBusyError, SessionNotFoundError } from "../core/errors.ts";
import { ignored } from "../core/ignored.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { RunOutcome } from "../machines/agent-types.ts";
import type { EventLog, NewEvent } from "../store/event-log.ts";
import { isEventOfType, type ArborEventData } from "../store/events/catalogue.ts";
import { SHREDDED_PROMPT } from "../store/crypto/log-cipher.ts";
import { foldTask, TASK_EVENT_TYPES, type TaskClaim, type TaskState } from "../store/task-queue.ts";
import { foldOpenRun, isRunOrphaned, OPEN_RUN_EVENT_TYPES, type OpenRun } from "./open-runs.ts";
import { claimTask, isClaimLive, linkedRun, releaseHold, type ClaimedTask, type LinkedRun } from "./task-claims.ts";

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
  /** The TTL of a claim's lease on a log with stream ownership, in ms (default: the harness's `leaseTtlMs`, 10 s). */
  leaseTtlMs?: number;
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

/**
 * How long a run whose approvals were all decided is left to the process that decided them (an
 * HTTP approval answer continues it at once and streams it) before a worker continues it, in ms.
 */
const DECIDED_GRACE_MS = 2000;

/**
 * Codes of a refusal by the log, or of a run this process no longer writes (`LEASE_LOST`: its lease lapsed and another process may go on with the
 * run): the task is given back, not failed, and a later claim ends it as the run ends.
 */
const RELEASE_CODES = new Set(["SESSION_BUSY", "EXPECTED_VERSION_CONFLICT", "LOG_COMMIT_FAILED", "LOG_CLOSED", "RUN_OWNED", "LEASE_LOST"]);
/** Codes of a continuation that is not (or no longer) this worker's to make. */
const NOT_OURS = new Set(["SESSION_BUSY", "RUN_OWNED", "NOTHING_TO_RESUME", "APPROVAL_PENDING", "EXPECTED_VERSION_CONFLICT", "SESSION_NOT_FOUND"]);

/**
 * Node's socket error codes and PostgreSQL's connection-exception (class 08) and shutdown (57P01–57P03) SQLSTATEs: the log's connection was lost
 * (a server restart, a network cut), not the task's fault.
 */
const CONNECTION_LOSS = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "57P01", "57P02", "57P03"]);

/** True for an error that says the connection to the log was lost: the task is given back and tried again. */
function isConnectionLoss(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string" && (CONNECTION_LOSS.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  return error instanceof Error && /^Connection terminated/.test(error.message);
}

function codeOf(error: unknown): string | undefined {
  return ArborError.isInstance(error) ? error.code : undefined;
}

/** Starts a worker (see the module contract). */
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
  /** When this worker first saw each suspended run with every call decided, by run id. */
  const decidedSince = new Map<string, number>();
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
      const claimed = await claimTask(log, task, id, options.leaseTtlMs !== undefined ? { ttlMs: options.leaseTtlMs } : {});
      if (claimed) execute(claimed);
    }
    if (options.continueRuns) await passRuns(now);
    if (wakeTimer) clearTimeout(wakeTimer);
    wakeTimer = Number.isFinite(nextDue) ? setTimeout(wake, Math.max(0, nextDue - Date.now()) + 5) : undefined;
  };

  const passRuns = async (now: number): Promise<void> => {
    // A session with a due task is the task's: its claim continues the run first.
    const tasked = new Set([...tasks.values()].filter((task) => task.startAt <= now).map((task) => task.sessionId));
    const decided = new Set([...runs.values()].filter((run) => run.status === "suspended" && run.waiting.length === 0).map((run) => run.runId));
    for (const runId of decidedSince.keys()) if (!decided.has(runId)) decidedSince.delete(runId);
    for (const runId of decided) if (!decidedSince.has(runId)) decidedSince.set(runId, now);
    for (const run of [...runs.values()]) {
      if (closed || running.size >= concurrency) return;
      if (busySessions.has(run.sessionId) || tasked.has(run.sessionId) || (runNotBefore.get(run.sessionId) ?? 0) > now) continue;
      // The sweep looks again after the grace.
      const ready = decided.has(run.runId) ? now - decidedSince.get(run.runId)! >= DECIDED_GRACE_MS : run.status === "open" && (await isRunOrphaned(log, run));
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
        RELEASE_CODES.has(codeOf(error) ?? "") || isConnectionLoss(error)
          ? "release"
          : { status: "failed", code: codeOf(error) ?? "WORKER_ERROR", error: error instanceof Error ? error.message : String(error) },
      );
      const event: NewEvent =
        ending === "release"
          ? { type: "task.released", data: { taskId: task.taskId, attempt: claimed.attempt, reason: "the session is busy in another process, or the log refused a write" } }
          : { type: "task.ended", data: { taskId: task.taskId, attempt: claimed.attempt, ...ending } };
      if (ending === "release") notBefore.set(task.taskId, Date.now() + retryMs);
      try {
        // At the version of this claim: when another worker claimed the task since (this claim's lease lapsed while the run went on), the ending
        // is that claim's to write, from the run it took over, and the log refuses this one.
        await log.append(task.streamId, [{ ...event, metadata: { sessionId: task.sessionId } }], { expectedVersion: task.version });
      } catch (error) {
        if (ExpectedVersionConflictError.isInstance(error)) ignored("a task claimed again by another worker is ended by that worker", error);
        else report(error);
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

  /**
   * The run any earlier claim of this task started: a claim given back (`task.released`) may follow the one that started it.
   */
  const earlierRun = async (claimed: ClaimedTask): Promise<{ claim: TaskClaim; run: LinkedRun } | undefined> => {
    for (const claim of claimed.task.claims.filter((each) => each.attempt < claimed.attempt)) {
      const run = await linkedRun(log, claimed.task.sessionId, claim);
      if (run) return { claim, run };
    }
    return undefined;
  };

  const runClaimed = async (claimed: ClaimedTask): Promise<Ending | "release"> => {
    const { task } = claimed;
    // Its session was deleted on an encrypted log, and the prompt with it: nothing to run.
    if (task.input === SHREDDED_PROMPT) {
      return { status: "failed", code: "DATA_KEY_UNAVAILABLE", error: `The prompt of task ${task.taskId} was shredded with its session "${task.sessionId}" (the session was deleted).` };
    }
    const found = await earlierRun(claimed);
    const linked = found?.run;
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
          outcome = await session.resume(`Worker ${id} took over task ${task.taskId} from a process that died (claim ${found.claim.attempt}).`);
        } catch (error) {
          if (codeOf(error) !== "NOTHING_TO_RESUME") throw error;
          // Opening the session ended the run (durability `interrupt`): the task ends as it did.
          const after = await linkedRun(log, task.sessionId, found.claim);
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

/**
 * A worker whose claim was taken over does not end the task. Its claim's lease can lapse while it
 * still runs (a process paused past the TTL under load); another worker then claims the task,
 * takes the run over and ends the task as the run ended. The first worker's run comes back
 * `failed` (`LEASE_LOST`), and its ending must not be written over the new claim: it is appended
 * at the version of its own claim, so the log refuses it. Found by the fleet's chaos test on
 * PostgreSQL: a run ended `done`, and its task `failed`. Likewise a run that comes back
 * `LEASE_LOST`, or a connection to the log that is lost mid-task, gives the task back.
 */
import { describe, expect, it } from "vitest";
import type { RunOutcome } from "../../src/machines/agent-types.ts";
import { startTaskWorker } from "../../src/harness/task-worker.ts";
import { createMemoryEventLog } from "../../src/store/in-memory/memory-event-log.ts";
import { queueTask, readTask } from "../../src/store/task-queue.ts";

describe("a task whose claim another worker took over", () => {
  it("is not ended by the first worker's failed run; the new claim ends it", async () => {
    const log = createMemoryEventLog();
    const queued = await queueTask(log, { sessionId: "s-takeover", input: "go" });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let finish!: (outcome: RunOutcome) => void;
    const outcome = new Promise<RunOutcome>((resolve) => (finish = resolve));
    const errors: unknown[] = [];
    const worker = startTaskWorker({
      log,
      id: "worker-1",
      sweepIntervalMs: 50,
      onError: (error) => errors.push(error),
      open: async () => ({
        prompt: () => {
          started();
          return outcome;
        },
        close: async () => {},
      }),
    });
    await running;
    const claimed = (await readTask(log, queued.taskId))!;
    expect(claimed.claim).toMatchObject({ attempt: 1, worker: "worker-1" });

    // Another worker claims the task, as it does once the first claim's lease has lapsed.
    await log.append(queued.streamId, [{ type: "task.claimed", data: { taskId: queued.taskId, attempt: 2, worker: "worker-2" }, metadata: { sessionId: "s-takeover" } }], {
      expectedVersion: claimed.version,
    });
    // The first worker's run comes back failed: its writer lost the lease.
    finish({ runId: "run-1", status: "failed", code: "LEASE_LOST", error: "The lease of session s-takeover expired", messages: [] });
    await worker.close();

    const types = (await log.readStream(queued.streamId)).map((event) => event.type);
    expect(types).toEqual(["task.queued", "task.claimed", "task.claimed"]);
    expect(errors).toEqual([]);
    // The new claim ends the task as the run it took over ended.
    await log.append(queued.streamId, [{ type: "task.ended", data: { taskId: queued.taskId, attempt: 2, status: "done", runId: "run-1" }, metadata: { sessionId: "s-takeover" } }]);
    expect((await readTask(log, queued.taskId))!.ended).toMatchObject({ status: "done", attempt: 2 });
    await log.close();
  });

  /** Runs one task whose first attempt goes as `first` says and whose second ends done; returns the task stream's types and its ending. */
  async function firstAttemptThen(sessionId: string, first: () => Promise<RunOutcome>) {
    const log = createMemoryEventLog();
    const queued = await queueTask(log, { sessionId, input: "go" });
    let attempts = 0;
    const worker = startTaskWorker({
      log,
      id: "worker-1",
      sweepIntervalMs: 20,
      retryDelayMs: 20,
      open: async () => ({
        prompt: async (): Promise<RunOutcome> => (++attempts === 1 ? first() : { runId: "run-1", status: "done", messages: [] }),
        close: async () => {},
      }),
    });
    for (let wait = 0; wait < 200 && !(await readTask(log, queued.taskId))!.ended; wait++) await new Promise((resolve) => setTimeout(resolve, 10));
    await worker.close();
    const types = (await log.readStream(queued.streamId)).map((event) => event.type);
    const ended = (await readTask(log, queued.taskId))!.ended;
    await log.close();
    return { types, ended };
  }

  it("is given back, not failed, when the run comes back LEASE_LOST with no other claim yet", async () => {
    // The first attempt's writer lost its lease; the second runs to the end.
    const { types, ended } = await firstAttemptThen("s-lapsed", async () => ({ runId: "run-1", status: "failed", code: "LEASE_LOST", error: "The lease of session s-lapsed expired", messages: [] }));
    expect(types).toEqual(["task.queued", "task.claimed", "task.released", "task.claimed", "task.ended"]);
    expect(ended).toMatchObject({ status: "done", attempt: 2 });
  });

  it("is given back, not failed, when the connection to the log is lost mid-task (read ECONNRESET)", async () => {
    // PostgreSQL's taker of a lapsed lease ends the connection this process's locks were on.
    const { types, ended } = await firstAttemptThen("s-reset", async () => {
      throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    });
    expect(types).toEqual(["task.queued", "task.claimed", "task.released", "task.claimed", "task.ended"]);
    expect(ended).toMatchObject({ status: "done", attempt: 2 });
  });
});

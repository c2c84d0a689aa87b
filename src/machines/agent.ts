/**
 * `createAgent`: the agent actor system of one session, behind the {@link Agent} API (`agent-types.ts`). This module is wiring; the run state lives
 * in the agent machine's context or in the log (`docs/machines.md`, "Where a run's state lives"). Recovery runs once at creation; every event goes
 * through ONE writer, flushed before any tool or model effect (commit before effect); a refused append fails the run and the next call reloads.
 * `prompt()`/`continue()` resolve with the outcome and never reject for provider or tool failures.
 */
import { uuidv7 } from "../core/uuid-v7.ts";
import { defer } from "../core/rx.ts";
import { createActor, waitFor } from "xstate";
import { ArborError, InvalidStateError, NothingToResumeError, SessionBusyError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { Agent, AgentOptions, PromptOptions, ResumeRunOptions, RunOutcome } from "./agent-types.ts";
import { agentSettings } from "./agent-settings.ts";
import { AgentApprovals } from "./agent-approvals.ts";
import { agentRequestBuilder, agentToolRuntime } from "./agent-requests.ts";
import { createPrepareRun, runOwnedError } from "./agent-prepare.ts";
import { AgentStreams, agentStateOf, type AgentStateStart } from "./agent-state.ts";
import { AgentWriter, runOutcome, writerFailureMessage } from "./agent-writer.ts";
import { agentMachine, operationOf } from "./agent.machine.ts";
import { errorMessageOf, toAgentMessages } from "./loop-messages.ts";
import { recoverSession } from "./recovery.ts";
import { createRunOwnership } from "./run-ownership.ts";
import { entryEvent } from "./run-records.ts";
import { provideRunLogic } from "./run-logic.ts";
import { registerSessionActor, runBusyError, slotOver, type SessionActor } from "./session-actor.ts";
import { createSessionWriter } from "./session-writer.ts";
import { idleAtStart, LazyAgent } from "./lazy-agent.ts";
import { ignoreError } from "../core/ignored.ts";

/**
 * Creates the agent of `options.session` (see the module contract). Never throws;
 * recovery failures surface as the rejection of the first `prompt()`/`continue()`.
 * @example
 * const agent = createAgent({ session, model: createAiSdkModelClient(languageModel, info) });
 * await agent.prompt("list the files");
 */
export function createAgent(options: AgentOptions): Agent {
  // An idle session's agent is built on first use (`lazy-agent.ts`).
  if (options.inspect === undefined && idleAtStart(options.session.view.activity)) return new LazyAgent(options, createEagerAgent);
  return createEagerAgent(options);
}

/** The agent, built now (see the module contract): wiring of its machine, writer, lease, approvals and streams. */
function createEagerAgent(options: AgentOptions): Agent {
  const { session } = options;
  const hooks = options.hooks ?? {};
  // What the agent starts from: its options' settings (else the session's) and the log's queues.
  const start: AgentStateStart = {
    settings: agentSettings({
      model: options.model,
      ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
      tools: options.tools ?? [],
      activeToolNames: options.activeToolNames ?? session.view.buildContext().activeToolNames,
      thinkingLevel: options.thinkingLevel ?? session.view.buildContext().thinkingLevel,
    }),
    queues: session.view.activity.queues,
  };
  // Model, tools, active tools and thinking level are the session actor's state (`agent-settings.ts`).
  const settingsNow = () => actor.getSnapshot().context.settings ?? start.settings;
  const streams = new AgentStreams(() => agentStateOf(actor.getSnapshot(), start));

  // Across processes (PostgreSQL, SQLite): each run leases its session from preparation until it
  // settles; a lost lease fails the run (its tools are aborted) and fences its writer.
  const runOwnership = createRunOwnership(session, {
    ...(options.leaseTtlMs !== undefined ? { ttlMs: options.leaseTtlMs } : {}),
    onLost: (error) => actor.send({ type: "WRITER.FAILED", error: writerFailureMessage(error), code: error.code }),
  });
  const writer = new AgentWriter(() =>
    createSessionWriter({
      session,
      onError: (error) => actor.send({ type: "WRITER.FAILED", error: writerFailureMessage(error), code: ArborError.isInstance(error) ? error.code : undefined }),
      onCommitted: (events) => streams.committed(events),
      // A run whose lease was lost (another process may have taken it over) writes nothing more.
      fence: () => runOwnership.fence(),
    }),
  );
  /** Recovery, hook and approval records: pushed like a run's events, resolved once committed (rejects with the writer's failure). */
  const recordNow = async (events: NewEvent[]) => {
    writer.now.push(...events);
    await writer.now.commit();
  };
  const record = (_: unknown, params: { events: NewEvent[] }) => {
    writer.now.push(...params.events);
    streams.schedule();
  };

  // Budgets (`run-budget.ts`): a refusal goes to the run, which ends `budget_exceeded`.
  const budget = options.budget?.({
    currentRunId: () => actor.getSnapshot().context.request?.runId,
    onExceeded: (exceeded, call) => actor.getSnapshot().children.run?.send({ type: "BUDGET.EXCEEDED", exceeded, call }),
    onFailed: (error, code) => actor.getSnapshot().children.run?.send({ type: "FAIL", error, code }),
  });
  const runtime = agentToolRuntime(options, {
    settings: settingsNow,
    commit: () => writer.now.commit(),
    runPolicy: () => actor.getSnapshot().context.runInput?.policy,
    ...(budget ? { budget } : {}),
  });
  const buildRequest = agentRequestBuilder(options, { settings: settingsNow, runSystemPrompt: () => actor.getSnapshot().context.runInput?.systemPrompt });

  // After a lost write race: catch the view up with the log, start a fresh writer and close our own run the refusal left open. A run another live
  // process owns keeps the session refused (SessionBusyError at the next prepare).
  const reload = async () => {
    await writer.now.flush();
    if (!session.refresh) {
      throw new InvalidStateError(`Session ${session.id} cannot reload: its handle has no refresh(); open the session again.`);
    }
    await session.refresh();
    writer.replace();
    actor.send({ type: "ERROR.SET" });
    await recoverSession(session, { record: recordNow });
    approvals.sync();
  };

  const isBusy = () => operationOf(actor.getSnapshot()) !== "idle";
  const slotLeft = (kind: string) => waitFor(actor, (snapshot) => operationOf(snapshot) !== kind).then(() => undefined, ignoreError("a stopped agent (disposed) holds no slot: nothing to wait for"));
  /** Something runs in the slot (awaiting-approval is parked, not working). */
  const isWorking = () => isBusy() && operationOf(actor.getSnapshot()) !== "awaiting-approval";
  const approvals = new AgentApprovals({ session, actor: () => actor, writer, ready: () => ready, reload, isWorking });
  const prepareRun = createPrepareRun({ session, options, settings: settingsNow, writer, ready: () => ready, ownership: runOwnership, reload, record: recordNow, runtime, approvals, ...(budget ? { budget } : {}) });
  const runLogic = provideRunLogic({
    record: (events) => record(undefined, { events }),
    getModel: () => settingsNow().client,
    buildRequest,
    runtime,
    hooks,
    flush: () => writer.now.flush(),
    commit: () => writer.now.commit(),
    ...(budget ? { budget } : {}),
  });
  const actor = createActor(agentMachine.provide({ actions: { record }, actors: { run: runLogic, prepareRun } }), {
    input: {
      settings: start.settings,
      steeringMode: options.steeringMode,
      followUpMode: options.followUpMode,
      // The queues as the log last recorded them: the view's activity projection (not recorded again).
      ...start.queues,
    },
    ...(options.inspect ? { inspect: options.inspect as never } : {}),
  });
  // A run ended: commit what it (and the deferred entries) pushed, release its lease, then every caller gets the outcome.
  actor.on("runSettled", ({ output }) => {
    void (async () => {
      await writer.now.flush();
      await runOwnership.release();
      actor.send({ type: "RUN.FINISHED", outcome: runOutcome(output, writer.now.failure) });
    })();
  });
  actor.on("runRejected", () => {
    void runOwnership.release();
    // A refused resume: the slot went back to awaiting-approval; idle when nothing waits any more.
    if (operationOf(actor.getSnapshot()) === "awaiting-approval") approvals.sync();
  });
  actor.subscribe({ next: () => streams.schedule(), error: () => undefined });
  actor.start();

  // Recovery first (queues restored from the log, then an unfinished run closed, or continued
  // with `durability: "continue"`); runs wait for it. A refused continuation is the state's error.
  const ready = (async () => {
    const report = await recoverSession(session, { record: recordNow }, { durability: options.durability ?? "interrupt" });
    // A run closed `interrupted` takes its steering with it: those messages were to change that run, not to follow the next prompt (logged cleared).
    if (report.recovered && report.pendingToolCallIds === undefined) actor.send({ type: "CLEAR", queue: "steering" });
    // A continued `resume` run carries approved calls still open: the takeover settles them (no wait for a decision).
    if (!report.resumable) approvals.sync();
    else {
      startRun({ type: "TAKEOVER" }, report.resumable.runId).catch((error: unknown) => {
        actor.send({ type: "ERROR.SET", error: errorMessageOf(error) });
        approvals.sync();
      });
    }
  })();
  ready.catch(ignoreError("a failed recovery is thrown by whenReady"));

  // Entries queued while the slot was busy are recorded by the machine when the work ends.
  const machineSlot = slotOver(session.id, actor, () => writer.now);
  const slot: SessionActor = {
    ...machineSlot,
    // A compaction or navigation holds the session across processes like a run (PostgreSQL), so another process's recovery leaves its summary intent
    // alone (`summary-recovery.ts`). The caller's promise settles once the slot is free again (after the deferred entries are recorded).
    operate: (kind, work) =>
      isBusy()
        ? machineSlot.operate(kind, work)
        : machineSlot
            .operate(kind, async (signal) => {
              await runOwnership.take();
              try {
                return await work(signal);
              } finally {
                await runOwnership.release();
              }
            })
            .finally(() => slotLeft(kind)),
  };
  registerSessionActor(session, slot);

  /** Run `runId`'s outcome, from the machine's `runFinished` (or its `runRejected`). */
  const outcomeOf = (runId: string) =>
    new Promise<RunOutcome>((resolve, reject) => {
      const finished = actor.on("runFinished", ({ outcome }) => {
        if (outcome.runId !== runId) return;
        stop();
        resolve(outcome);
      });
      const rejected = actor.on("runRejected", (event) => {
        if (event.runId !== runId) return;
        stop();
        reject(event.error);
      });
      const stop = () => {
        finished.unsubscribe();
        rejected.unsubscribe();
      };
    });
  function startRun(
    event: { type: "PROMPT"; prompts: AgentMessage[]; prepare?: PromptOptions["prepare"] } | { type: "CONTINUE" } | { type: "TAKEOVER"; reason?: string },
    runId: string = uuidv7(),
  ): Promise<RunOutcome> {
    const promise = outcomeOf(runId);
    actor.send({ ...event, runId });
    return promise;
  }

  async function resumeRun(resumeOptions: ResumeRunOptions = {}): Promise<RunOutcome> {
    await ready;
    const request = actor.getSnapshot().context.request;
    // A continuation of this run already holds the slot (the one started at open): its outcome.
    if (isBusy() && request?.kind === "takeover") return outcomeOf(request.runId);
    if (slot.operation() === "awaiting-approval") {
      // Calls wait for a person (the log says so, in any process): the run stays suspended until
      // they are decided and `continue()` resumes them. Catch up first: another process may have.
      await writer.now.flush();
      await session.refresh?.();
      approvals.sync();
      const last = session.view.activity.runs.at(-1);
      if (slot.operation() === "awaiting-approval" && last) {
        return { runId: last.runId, status: "suspended", messages: [], pendingApprovals: approvals.open().map((record) => record.toolCallId) };
      }
    }
    if (isBusy()) throw busyForRun("resumeRun()");
    await writer.now.flush();
    if (writer.now.failure !== undefined) await reload();
    await session.refresh?.();
    const open = session.view.activity.openRun;
    if (!open) {
      throw new NothingToResumeError(`Session ${session.id} has no unfinished run to resume: its last run has ended.`, { details: { sessionId: session.id } });
    }
    if (open.gated.length > 0) {
      // Calls wait for approval: they keep waiting; the run is closed suspended (recovery), as at open.
      const report = await recoverSession(session, { record: recordNow });
      if (report.liveRun) throw runOwnedError(session.id, report.liveRun.runId, report.liveRun.owner);
      approvals.sync();
      return { runId: open.runId, status: "suspended", messages: [], pendingApprovals: report.pendingToolCallIds ?? [] };
    }
    if (isBusy()) throw busyForRun("resumeRun()");
    return startRun({ type: "TAKEOVER", ...(resumeOptions.reason !== undefined ? { reason: resumeOptions.reason } : {}) }, open.runId);
  }

  const persistSetting = async (entry: Record<string, unknown> & { type: string }) => {
    const event = entryEvent({ runId: "settings" }, entry);
    // After a refused write the log is re-read first (as the next run would), so the setting is not lost.
    if (!isBusy() && writer.now.failure !== undefined) await reload();
    if (isBusy()) {
      actor.send({ type: "SETTINGS.DEFER", events: [event] });
      return writer.now.flush();
    }
    writer.now.push(event);
    // Idle: the caller learns of a refused write (the writer is then poisoned until reload).
    return writer.now.commit();
  };

  const busyForRun = (what: string) => runBusyError(session.id, slot.operation(), what);
  const finishing = () => actor.getSnapshot().context.finishing.length > 0;

  const agent: Agent = {
    sessionId: session.id,
    prompt(input, promptOptions = {}) {
      if (isBusy()) throw busyForRun("prompt()");
      return startRun({ type: "PROMPT", prompts: toAgentMessages(input), ...(promptOptions.prepare ? { prepare: promptOptions.prepare } : {}) });
    },
    continue() {
      if (isWorking()) return Promise.reject(busyForRun("continue()"));
      return startRun({ type: "CONTINUE" });
    },
    resumeRun,
    approve: (toolCallId, decision = {}) => approvals.decide(toolCallId, "approved", decision.reason),
    deny: (toolCallId, decision = {}) => approvals.decide(toolCallId, "denied", decision.reason),
    pendingApprovals: () => approvals.pending(),
    operation: () => slot.operation(),
    operate: (kind, work) => slot.operate(kind, work),
    writes: slot.writes,
    appendEntry: (entry) => persistSetting(entry),
    appendRecords: (events) => recordNow(events),
    steer(message, steerOptions) {
      const delivery = steerOptions?.delivery;
      actor.send({ type: "STEER", message: toAgentMessages(message)[0], ...(delivery === "passive" ? { passive: true } : delivery === "nextTurn" ? { nextTurn: true } : {}) });
    },
    followUp(message) {
      actor.send({ type: "FOLLOW_UP", message: toAgentMessages(message)[0] });
    },
    clearSteeringQueue: () => actor.send({ type: "CLEAR", queue: "steering" }),
    clearFollowUpQueue: () => actor.send({ type: "CLEAR", queue: "followUp" }),
    clearAllQueues: () => actor.send({ type: "CLEAR", queue: "all" }),
    hasQueuedMessages() {
      const context = actor.getSnapshot().context;
      return context.steering.length > 0 || context.followUp.length > 0 || context.passive.length > 0 || context.nextTurn.length > 0;
    },
    abort: (reason) => slot.abort(reason),
    whenReady: () => ready,
    async waitForIdle() {
      await ready.catch(ignoreError("a failed recovery is thrown by whenReady, not waitForIdle"));
      while (isWorking() || finishing()) {
        await new Promise<void>((resolve) => {
          const subscription = streams.state$.subscribe((state) => {
            if (state.status === "idle") {
              queueMicrotask(() => subscription.unsubscribe());
              resolve();
            }
          });
        });
        // A compaction or navigation holds the slot while the run status says idle: give its I/O a
        // turn instead of spinning on microtasks (which would starve it for good).
        if (finishing() || isWorking()) await new Promise((resolve) => setImmediate(resolve));
      }
      await writer.now.flush();
    },
    getState: () => agentStateOf(actor.getSnapshot(), start),
    state$: streams.state$,
    events$: defer(() => session.events$()),
    runEvents$: streams.runEvents$,
    auditEvents$: defer(() => session.auditEvents$()),
    async setModel(next, modelOptions = {}) {
      actor.send({ type: "SETTINGS.SET", change: { model: next, ...(modelOptions.name !== undefined ? { modelName: modelOptions.name } : {}) } });
      await persistSetting({ type: "model_change", provider: next.provider, modelId: next.modelId });
    },
    async setThinkingLevel(level) {
      actor.send({ type: "SETTINGS.SET", change: { thinkingLevel: level } });
      await persistSetting({ type: "thinking_level_change", thinkingLevel: level });
    },
    async setTools(next, names) {
      actor.send({ type: "SETTINGS.SET", change: { tools: next, ...(names !== undefined ? { activeToolNames: names } : {}) } });
      if (names !== undefined) await persistSetting({ type: "active_tools_change", toolNames: names });
    },
    async reload() {
      if (isWorking()) throw new SessionBusyError("reload(): a run is active; wait for it or abort it first.");
      await ready;
      await reload();
    },
    async dispose() {
      // A session awaiting approval is left waiting: the log holds the open approvals for the next process.
      if (isWorking()) {
        actor.send({ type: "INTERRUPT", reason: "The agent was disposed while a run was active." });
        await agent.waitForIdle();
      }
      await writer.created?.flush();
      actor.stop();
      streams.complete();
    },
  };
  return agent;
}

/**
 * `createAgent`: the agent actor system of one session, behind the {@link Agent} API
 * of `agent-types.ts`.
 *
 * Contract (ours; loop semantics pi 0.73.1's, `docs/pi-parity.md`):
 * - one agent actor per session; `prompt()` while a run is preparing or active throws
 *   `SessionBusyError` synchronously; `continue()` rejects with `InvalidStateError` when
 *   there is nothing to continue from (empty session, or a finished assistant reply and
 *   empty queues); a trailing error/aborted assistant can be continued (the model adapter
 *   drops it from the request, so the call is a retry);
 * - an agent whose session needs no start-up work (no open run, summary intent or approval)
 *   is built on first use (`lazy-agent.ts`): an idle agent costs one small object;
 * - crash recovery runs once when the agent is created (the steering and follow-up
 *   queues are restored from the view's activity projection, `view.activity.queues`, then
 *   `recoverSession` closes an unfinished run, appending through the agent's writer like
 *   every other write, so its events reach `runEvents$` too); every run, `waitForIdle()` and `whenReady()` wait for it;
 * - every logged event goes through ONE session writer (group commit per tick);
 * - commit before effect: before any tool's `execute` and before any model request, the
 *   writer is flushed and its commit awaited, so the run start, the prompt, the assistant
 *   message holding the call and `tool.started` are durable before the effect begins;
 *   `prompt()` / `continue()` resolve after the run's events are committed, with the
 *   run's outcome; they never reject for provider or tool failures (errors are data);
 * - a refused append (another process wrote to the session) fails the run with the
 *   conflict's message and code, and nothing more is written; the run is NOT retried (its
 *   effects may be partly done); the next `prompt()` / `continue()` first reloads the
 *   session from the log (`reload()` does it at once): the view catches up, a fresh writer
 *   replaces the poisoned one, and recovery closes the refused run if it was left open;
 * - `events$` is the session's logged events, catch-up then live; `runEvents$` the
 *   events this agent commits from now on; `state$` replays the current snapshot then changes;
 * - approval (ours; `approvals.ts`): a call that needs approval (the tool's
 *   `needsApproval`, or `requireApproval` by name) is logged `approval.requested` and not run;
 *   the run ends `suspended` once its other calls settled, and the slot is `awaiting-approval`
 *   (also after a restart: the agent folds the log's open approvals at start-up);
 *   `approve()` / `deny()` record the decision (from any process); `continue()` then runs a
 *   `resume` run: approved calls run once, denied ones get an error result saying the user
 *   declined; `abort()` while waiting closes every waiting call with a result;
 * - `setModel` / `setThinkingLevel` / `setTools(…, names)` change the session actor's state
 *   (`SETTINGS.SET`, `agent-settings.ts`; no closure holds them), take effect at the next model
 *   call and are persisted (`model_change`, `thinking_level_change`, `active_tools_change`)
 *   at once when idle, else when the run settles (never inside a tool batch).
 *
 * @example
 * ```ts
 * const agent = createAgent({ session, model, tools: [echo] });
 * const outcome = await agent.prompt("hello");
 * agent.events$.pipe(ofType("tool.ended")).subscribe((event) => console.log(event.data.outcome));
 * ```
 */
import { v7 as uuidv7 } from "uuid";
import { BehaviorSubject, defer, Subject } from "rxjs";
import { createActor, fromPromise } from "xstate";
import { convertToLlm } from "../core/convert-to-llm.ts";
import { ApprovalPendingError, ArborError, InvalidStateError, NothingToResumeError, RunOwnedError, SessionBusyError } from "../core/errors.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { ModelRequest } from "../core/model-stream.ts";
import type { NewEvent } from "../store/event-log.ts";
import { toAuditEvents } from "../store/events/audit.ts";
import { isArborEvent, type ArborEvent } from "../store/events/catalogue.ts";
import type { Agent, AgentOptions, AgentStateSnapshot, ResumeRunOptions, RunOutcome } from "./agent-types.ts";
import { agentSettings, type AgentSettings } from "./agent-settings.ts";
import { agentMachine, drainCount, operationOf, type PrepareRunInput, type PrepareRunOutput } from "./agent.machine.ts";
import { approvalsOf, openApprovals, type ApprovalRecord } from "./approval-fold.ts";
import { listPendingApprovals, recordApprovalDecision } from "./approvals.ts";
import { errorMessageOf, toAgentMessages, toolCallsOf } from "./loop-messages.ts";
import { resolveRetrySettings } from "./loop-retry.ts";
import type { ToolRuntime } from "./loop-tools.ts";
import { recoverSession, type RecoveryReport } from "./recovery.ts";
import { OWNER_STOPPED_REASON, planContinuation } from "./continuation.ts";
import { findLiveStreamRun } from "./run-lease.ts";
import { runningCalls, type ResumeDecision } from "./run-batch.ts";
import { createRunOwnership } from "./run-ownership.ts";
import { entryEvent } from "./run-records.ts";
import { provideRunLogic } from "./run-logic.ts";
import type { RunOutput } from "./run.machine.ts";
import { registerSessionActor, sessionBusyError, slotOver, writesOf, type SessionActor } from "./session-actor.ts";
import { createSessionWriter } from "./session-writer.ts";
import { idleAtStart, LazyAgent } from "./lazy-agent.ts";

/**
 * Creates the agent of `options.session` (see the module contract). Never throws;
 * recovery failures surface as the rejection of the first `prompt()`/`continue()`.
 *
 * @example
 * ```ts
 * const agent = createAgent({ session, model: createAiSdkModelClient(languageModel, info) });
 * await agent.prompt("list the files");
 * ```
 */
export function createAgent(options: AgentOptions): Agent {
  // An idle session's agent is built on first use (`lazy-agent.ts`).
  if (options.inspect === undefined && idleAtStart(options.session.view.activity)) return new LazyAgent(options, createEagerAgent);
  return createEagerAgent(options);
}

/** The agent, built now (see the module contract). */
function createEagerAgent(options: AgentOptions): Agent {
  const { session } = options;
  const hooks = options.hooks ?? {};
  const retry = resolveRetrySettings(options.retry);
  // Model, tools, active tools and thinking level are the session actor's state (`agent-settings.ts`).
  // Built on first use (an idle agent holds no machine, writer or context).
  let initial: AgentSettings | undefined;
  const initialSettings = (): AgentSettings =>
    (initial ??= agentSettings({
      model: options.model,
      ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
      tools: options.tools ?? [],
      activeToolNames: options.activeToolNames ?? session.view.buildContext().activeToolNames,
      thinkingLevel: options.thinkingLevel ?? session.view.buildContext().thinkingLevel,
    }));
  // The queues as the log recorded them when the agent was created (the machine's input).
  const initialQueues = session.view.activity.queues;
  const settingsNow = (): AgentSettings => actor?.getSnapshot().context.settings ?? initialSettings();
  const isActive = (name: string, names = settingsNow().activeToolNames) => names === null || names.includes(name);
  let lastError: string | undefined;
  const deferredSettings: NewEvent[] = [];
  // Created when `runEvents$` is first subscribed to (nobody else reads it).
  let committedSubject: Subject<ArborEvent> | undefined;
  const committed = (): Subject<ArborEvent> => {
    if (committedSubject) return committedSubject;
    committedSubject = new Subject<ArborEvent>();
    if (disposed) committedSubject.complete();
    return committedSubject;
  };
  let events: Agent["events$"] | undefined;
  let audit: Agent["auditEvents$"] | undefined;
  const requireApproval: readonly string[] | "all" = options.requireApproval ?? [];
  // The callers waiting for each run's outcome (a continuation can have several: the agent's own and resumeRun()'s).
  const settled = new Map<string, { resolve: (outcome: RunOutcome) => void; reject: (error: unknown) => void }[]>();
  const durability = options.durability ?? "interrupt";

  const modelInfo = () => ({ ...settingsNow().model });
  const activeTools = () => [...settingsNow().tools.values()].filter((tool) => isActive(tool.name));

  // Assigned when the machine is built (`machine()`); the writer reports to it.
  let actor: ReturnType<typeof createActor<typeof agentMachine>> | undefined;
  const newWriter = () =>
    createSessionWriter({
      session,
      onError: (error) => {
        const code = ArborError.isInstance(error) ? error.code : undefined;
        actor?.send({ type: "WRITER.FAILED", error: writerFailureMessage(error), code });
      },
      onCommitted: (events) => {
        if (!committedSubject) return;
        for (const event of events) if (isArborEvent(event)) committedSubject.next(event);
      },
      // A run whose lease was lost (another process may have taken it over) writes nothing more.
      fence: () => runOwnership.fence(),
    });
  // Replaced by reload() after a refused write (the old one is poisoned for good); created on first use.
  let current: ReturnType<typeof newWriter> | undefined;
  const writerNow = () => (current ??= newWriter());
  /** Recovery and hook records: pushed like a run's events, resolved once committed (rejects with the writer's failure). */
  const recordNow = { record: async (events: NewEvent[]) => {
    writerNow().push(...events);
    await writerNow().commit();
  } };
  const record = (_: unknown, params: { events: NewEvent[] }) => {
    writerNow().push(...params.events);
    scheduleState();
  };

  const runtime: ToolRuntime = {
    getTool: (name) => (isActive(name) ? settingsNow().tools.get(name) : undefined),
    hooks,
    toolContext: (call) =>
      typeof options.toolContext === "function" ? (options.toolContext as (c: typeof call) => unknown)(call) : options.toolContext,
    commit: () => writerNow().commit(),
    ...(options.secrets?.length ? { secrets: options.secrets } : {}),
    requiresApproval: (name) => requireApproval === "all" || requireApproval.includes(name),
  };

  const buildRequest = async (messages: AgentMessage[], signal: AbortSignal): Promise<ModelRequest> => {
    let context = messages;
    if (hooks.transformContext) context = await hooks.transformContext(context, signal);
    const llm = hooks.convertToLlm ? await hooks.convertToLlm(context) : convertToLlm(context);
    let request: ModelRequest = {
      ...options.requestDefaults,
      messages: llm,
      tools: activeTools().map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
      thinkingLevel: settingsNow().thinkingLevel,
    };
    if (options.systemPrompt !== undefined) request.systemPrompt = options.systemPrompt;
    if (hooks.beforeModelCall) request = await hooks.beforeModelCall(request);
    return request;
  };

  // Recovery first (queues restored from the log, then an unfinished run closed, or continued
  // with `durability: "continue"`); runs wait for it.
  const ready = (async () => {
    const report = await recoverSession(session, recordNow, { durability });
    await syncApprovals();
    if (report.resumable) continueAtOpen(report);
  })();
  ready.catch(() => undefined);
  /** Starts the continuation of the run recovery left open; its outcome goes to resumeRun()'s callers, a refusal to the state's error. */
  function continueAtOpen(report: RecoveryReport) {
    const runId = report.resumable!.runId;
    start({ type: "TAKEOVER" }, runId).catch((error: unknown) => {
      lastError = errorMessageOf(error);
      scheduleState();
    });
  }

  /** The open approvals of the log (after catching up with other processes' writes when idle). */
  const openInLog = async (): Promise<ApprovalRecord[]> => openApprovals(approvalsOf(session.view.activity));
  /** Puts the slot in `awaiting-approval` when the log has open approvals, back to idle when none is left. */
  async function syncApprovals() {
    const open = await openInLog();
    const operation = actor ? operationOf(actor.getSnapshot()) : "idle";
    if (open.length > 0 && operation === "idle") machine().send({ type: "APPROVAL.AWAIT" });
    else if (open.length === 0 && operation === "awaiting-approval") actor?.send({ type: "APPROVAL.CLEAR" });
  }

  // Across processes (PostgreSQL, SQLite): each run leases its session from preparation until it
  // settles; a lost lease fails the run (its tools are aborted) and fences its writer.
  const runOwnership = createRunOwnership(session, {
    ...(options.leaseTtlMs !== undefined ? { ttlMs: options.leaseTtlMs } : {}),
    onLost: (error) => actor?.send({ type: "WRITER.FAILED", error: writerFailureMessage(error), code: error.code }),
  });
  // After a lost write race: catch the view up with the log, start a fresh writer and close
  // our own run the refusal left open. A run another live process owns
  // keeps the session refused (SessionBusyError at the next prepare).
  const reload = async () => {
    await writerNow().flush();
    if (!session.refresh) {
      throw new InvalidStateError(`Session ${session.id} cannot reload: its handle has no refresh(); open the session again.`);
    }
    await session.refresh();
    current = newWriter();
    lastError = undefined;
    await recoverSession(session, recordNow);
    await syncApprovals();
    scheduleState();
  };

  const prepareRun = fromPromise<PrepareRunOutput, PrepareRunInput>(async ({ input }) => {
    await ready;
    try {
      await runOwnership.take();
    } catch (error) {
      // A takeover refused by a live owner's lease says so with its own code.
      if (input.kind === "takeover" && SessionBusyError.isInstance(error)) throw runOwnedError(input.runId, (error.details as { owner?: unknown }).owner);
      throw error;
    }
    if (writerNow().failure !== undefined) await reload();
    if (input.kind === "takeover") return prepareTakeover(input);
    if (session.view.activity.openRun) {
      // The log holds an unfinished run (another live process runs it, or its process is gone
      // and nobody continued it): refuse while it is live, else close it now (interrupted).
      // Catch up with the log first: another process may have ended it since the view was read.
      await reload();
      const report = await recoverSession(session, recordNow);
      if (report.liveRun) {
        throw new SessionBusyError(
          `Session ${session.id} has a run in progress in process ${report.liveRun.owner.pid} on ${report.liveRun.owner.host}; wait for it to finish or stop that process, then reopen the session.`,
          { details: { runId: report.liveRun.runId, owner: report.liveRun.owner } },
        );
      }
    }
    if (input.kind === "resume") {
      // Decisions may come from another process: catch up with the log first.
      await writerNow().flush();
      await session.refresh?.();
    }
    const prompts = input.prepare ? await input.prepare() : input.prompts;
    const context = session.view.buildContext();
    const base = {
      ...runBase(input.runId),
      kind: input.kind as "prompt" | "continue" | "resume",
      messages: context.messages,
    } as const;
    const settings: NewEvent[] = [];
    const scope = { runId: input.runId };
    const { model, thinkingLevel } = settingsNow();
    if (!context.model || context.model.provider !== model.provider || context.model.modelId !== model.modelId) {
      settings.push(entryEvent(scope, { type: "model_change", provider: model.provider, modelId: model.modelId }));
    }
    if (context.thinkingLevel !== thinkingLevel) {
      settings.push(entryEvent(scope, { type: "thinking_level_change", thinkingLevel }));
    }
    if (settings.length) writerNow().push(...settings);
    if (input.kind === "prompt") return { input: { ...base, prompts } };
    if (input.kind === "resume") {
      const resume = await resumeOf(context.messages, input.abort);
      // The context's pairing repair gave the waiting calls synthetic results: the resume writes the real ones.
      const waiting = new Set(resume.callIds);
      const messages = context.messages.filter((message) => !(message.role === "toolResult" && waiting.has(message.toolCallId) && isSynthetic(message)));
      return { input: { ...base, messages, prompts: [], resume } };
    }
    const last = context.messages[context.messages.length - 1];
    if (!last && input.steering.length === 0 && input.followUp.length === 0) {
      throw new InvalidStateError("Cannot continue: the session has no messages to continue from.");
    }
    if (!last || (last.role === "assistant" && last.stopReason !== "error" && last.stopReason !== "aborted")) {
      if (input.steering.length > 0) {
        const count = drainCount(input.steering, input.steeringMode);
        return {
          input: { ...base, prompts: input.steering.slice(0, count), skipInitialSteering: true },
          drained: { queue: "steering", count },
        };
      }
      if (input.followUp.length > 0) {
        const count = drainCount(input.followUp, input.followUpMode);
        return { input: { ...base, prompts: input.followUp.slice(0, count) }, drained: { queue: "followUp", count } };
      }
      throw new InvalidStateError(
        "Cannot continue from message role: assistant. The last reply is complete; prompt, steer or follow up instead.",
      );
    }
    return { input: { ...base, prompts: [] } };
  });

  /** The run input every kind of run shares: the loop's settings now. */
  function runBase(runId: string) {
    return {
      runId,
      toolExecution: options.toolExecution ?? "parallel",
      ...(options.maxToolCallsPerResponse !== undefined ? { maxToolCallsPerResponse: options.maxToolCallsPerResponse } : {}),
      sequentialTools: [...settingsNow().tools.values()].filter((tool) => tool.executionMode === "sequential").map((tool) => tool.name),
      retry,
      model: modelInfo(),
      hasBetweenTurns: hooks.betweenTurns !== undefined,
      hasOverflowHook: hooks.onContextOverflow !== undefined,
    } as const;
  }

  /**
   * The continuation of the session's open run (`continuation.ts`): refused while a live process
   * holds it; else `run.resumed` and the closed partial are committed, orphaned process groups
   * ended, and the run machine re-enters where the log says the run stopped.
   */
  async function prepareTakeover(input: PrepareRunInput): Promise<PrepareRunOutput> {
    await writerNow().flush();
    await session.refresh?.();
    const live = await findLiveStreamRun(session.ownership, session.view.activity);
    if (live) throw runOwnedError(live.runId, live.owner);
    const plan = planContinuation(session, { runId: input.runId, reason: input.reason ?? OWNER_STOPPED_REASON, getTool: (name) => runtime.getTool(name) });
    writerNow().push(...plan.events);
    await writerNow().commit();
    plan.endOrphans();
    return {
      input: {
        ...runBase(input.runId),
        kind: "continue",
        messages: plan.messages,
        prompts: [],
        continuation: plan.continuation,
        ...(plan.resume ? { resume: plan.resume } : {}),
      },
    };
  }

  function runOwnedError(runId: string, owner: unknown): InstanceType<typeof RunOwnedError> {
    return new RunOwnedError(`Session ${session.id}: run ${runId} is owned by a live process; it can be resumed once that process stops (or its lease expires).`, {
      details: { sessionId: session.id, runId, owner },
    });
  }

  /** The resume of the open approvals: the assistant holding them, its calls without a result, the decisions. */
  async function resumeOf(messages: AgentMessage[], abort: { reason?: string } | undefined) {
    const open = await openInLog();
    if (open.length === 0) throw new InvalidStateError(`Session ${session.id} has no tool call waiting for approval; prompt() or continue() instead.`);
    const undecided = open.filter((record) => record.status === "pending").map((record) => record.toolCallId);
    if (!abort && undecided.length > 0) {
      throw new ApprovalPendingError(`continue(): ${undecided.length} tool call(s) still wait for a decision (${undecided.join(", ")}); approve() or deny() each first, or abort().`, {
        details: { sessionId: session.id, pending: undecided },
      });
    }
    const byId = new Map(open.map((record) => [record.toolCallId, record]));
    const answered = new Set<string>();
    for (let index = messages.length - 1; index >= 0; index -= 1) {
      const message = messages[index];
      if (message.role === "toolResult" && !isSynthetic(message)) answered.add(message.toolCallId);
      if (message.role !== "assistant") continue;
      const calls = toolCallsOf(message);
      if (!calls.some((call) => byId.has(call.id))) break;
      const callIds = calls.filter((call) => !answered.has(call.id)).map((call) => call.id);
      const decisions: Record<string, ResumeDecision> = {};
      for (const id of callIds) {
        const record = byId.get(id);
        if (!record) continue;
        decisions[id] = abort
          ? { status: "cancelled", ...(abort.reason ? { reason: abort.reason } : {}), inputDigest: record.inputDigest, record: record.status === "pending" }
          : { status: record.status === "denied" ? "denied" : record.status === "cancelled" ? "cancelled" : "approved", ...(record.reason ? { reason: record.reason } : {}), inputDigest: record.inputDigest };
      }
      return { assistant: message, callIds, decisions, ...(abort ? { abort } : {}) };
    }
    throw new InvalidStateError(
      `Session ${session.id}: the tool calls waiting for approval (${open.map((record) => record.toolCallId).join(", ")}) are not on the current branch's last assistant message; move back to it to resume them.`,
    );
  }

  /**
   * The agent machine and its run logic, created on first use (a prompt, a queue, a setting, a
   * compaction or navigation, open approvals at start-up): an idle agent holds none of it.
   */
  function machine(): NonNullable<typeof actor> {
    if (actor) return actor;
    const runLogic = provideRunLogic({
      record: (events) => record(undefined, { events }),
      getModel: () => settingsNow().client,
      buildRequest,
      runtime,
      hooks,
      flush: () => writerNow().flush(),
      commit: () => writerNow().commit(),
    });

    const created = createActor(
      agentMachine.provide({ actions: { record }, actors: { run: runLogic, prepareRun } }),
      {
        input: {
          settings: initialSettings(),
          steeringMode: options.steeringMode,
          followUpMode: options.followUpMode,
          // The queues as the log last recorded them: the view's activity projection (not recorded again).
          ...initialQueues,
        },
        ...(options.inspect ? { inspect: options.inspect as never } : {}),
      },
    );
    created.on("runSettled", ({ output }) => {
      void finishRun(output);
    });
    created.on("runRejected", ({ runId, error }) => {
      void runOwnership.release();
      // A refused resume: the slot went back to awaiting-approval; idle when nothing waits any more.
      if (operationOf(created.getSnapshot()) === "awaiting-approval") void syncApprovals().catch(() => undefined);
      const pending = settled.get(runId) ?? [];
      settled.delete(runId);
      for (const waiter of pending) waiter.reject(error);
      scheduleState();
    });
    created.subscribe({ next: () => scheduleState(), error: () => undefined });
    created.start();
    actor = created;
    return created;
  }

  // The state subject exists once someone subscribed to `state$` (it starts from the snapshot then).
  let stateSubject: BehaviorSubject<AgentStateSnapshot> | undefined;
  let disposed = false;
  const stateNow = (): BehaviorSubject<AgentStateSnapshot> => {
    if (stateSubject) return stateSubject;
    stateSubject = new BehaviorSubject<AgentStateSnapshot>(snapshotOf());
    if (disposed) stateSubject.complete();
    return stateSubject;
  };
  const state$ = defer(() => stateNow());
  let stateScheduled = false;
  function scheduleState() {
    if (stateScheduled || !stateSubject) return;
    stateScheduled = true;
    queueMicrotask(() => {
      stateScheduled = false;
      stateSubject?.next(snapshotOf());
    });
  }
  function snapshotOf(): AgentStateSnapshot {
    const snapshot = actor?.getSnapshot();
    const run = snapshot?.children.run?.getSnapshot();
    const operation = snapshot ? operationOf(snapshot) : "idle";
    const running = operation === "preparing" || operation === "running";
    // awaiting-approval is not running: nothing happens until a decision and continue().
    const batch = run?.context.batch;
    const { activeToolNames: active, modelName } = settingsNow();
    const state: AgentStateSnapshot = {
      status: running ? "running" : "idle",
      operation,
      pendingToolCalls: batch ? runningCalls(batch) : [],
      steeringQueue: snapshot ? snapshot.context.steering : initialQueues.steering,
      followUpQueue: snapshot ? snapshot.context.followUp : initialQueues.followUp,
      thinkingLevel: settingsNow().thinkingLevel,
      model: { provider: settingsNow().model.provider, modelId: settingsNow().model.modelId },
      activeToolNames: active === null ? null : [...active],
    };
    if (modelName !== undefined) state.modelName = modelName;
    const runId = snapshot?.context.request?.runId;
    if (running && runId) state.runId = runId;
    if (run?.value === "streaming" && run.context.partial) state.streamingMessage = run.context.partial;
    if (lastError) state.errorMessage = lastError;
    return state;
  }

  async function finishRun(settledOutput: RunOutput) {
    let output = settledOutput;
    if (deferredSettings.length) writerNow().push(...deferredSettings.splice(0));
    await writerNow().flush();
    await runOwnership.release();
    const failure = writerNow().failure;
    if (failure !== undefined) {
      // The log refused a write (another writer): nothing of this run after that point is stored.
      output = { ...output, status: "failed", error: writerFailureMessage(failure) };
      if (ArborError.isInstance(failure)) output.code = failure.code;
    }
    lastError = output.status === "failed" ? output.error : undefined;
    const outcome: RunOutcome = { runId: output.runId, status: output.status, messages: output.messages };
    if (output.pendingApprovals) outcome.pendingApprovals = output.pendingApprovals;
    if (output.lastAssistant) outcome.lastAssistant = output.lastAssistant;
    if (output.error) outcome.error = output.error;
    if (output.code) outcome.code = output.code;
    const pending = settled.get(output.runId) ?? [];
    settled.delete(output.runId);
    scheduleState();
    for (const waiter of pending) waiter.resolve(outcome);
  }

  let slotOfMachine: SessionActor | undefined;
  const machineSlot = () => (slotOfMachine ??= slotOver(session.id, machine(), writerNow));
  // Entries queued while the slot was busy are written when a compaction or navigation ends
  // (after a run, `finishRun` writes them).
  const slot: SessionActor = {
    sessionId: session.id,
    writes: writesOf(writerNow),
    operation: () => (actor ? operationOf(actor.getSnapshot()) : "idle"),
    abort: (reason) => actor?.send({ type: "ABORT", reason }),
    // A compaction or navigation holds the session across processes like a run (PostgreSQL), so
    // another process's recovery leaves its summary intent alone (`summary-recovery.ts`).
    operate: (kind, work) =>
      machineSlot().operate(kind, async (signal) => {
        await runOwnership.take();
        try {
          return await work(signal);
        } finally {
          await runOwnership.release();
        }
      }).finally(() => {
        if (deferredSettings.length) writerNow().push(...deferredSettings.splice(0));
      }),
  };
  registerSessionActor(session, slot);
  const isBusy = () => slot.operation() !== "idle";
  /** Something runs in the slot (awaiting-approval is parked, not working). */
  const isWorking = () => isBusy() && slot.operation() !== "awaiting-approval";
  /** A promise of run `runId`'s outcome. */
  const outcomeOf = (runId: string) =>
    new Promise<RunOutcome>((resolve, reject) => settled.set(runId, [...(settled.get(runId) ?? []), { resolve, reject }]));
  function start(
    event: { type: "PROMPT"; prompts: AgentMessage[]; prepare?: () => Promise<AgentMessage[]> } | { type: "CONTINUE" } | { type: "TAKEOVER"; reason?: string },
    runId: string = uuidv7(),
  ): Promise<RunOutcome> {
    const promise = outcomeOf(runId);
    machine().send({ ...event, runId });
    return promise;
  }

  async function resumeRun(resumeOptions: ResumeRunOptions = {}): Promise<RunOutcome> {
    await ready;
    const request = actor?.getSnapshot().context.request;
    // A continuation of this run already holds the slot (the one started at open): its outcome.
    if (isBusy() && request?.kind === "takeover") return outcomeOf(request.runId);
    if (isBusy()) throw busyForRun("resumeRun()");
    await writerNow().flush();
    if (writerNow().failure !== undefined) await reload();
    await session.refresh?.();
    const open = session.view.activity.openRun;
    if (!open) {
      throw new NothingToResumeError(`Session ${session.id} has no unfinished run to resume: its last run has ended.`, { details: { sessionId: session.id } });
    }
    if (open.gated.length > 0) {
      // Calls wait for approval: they keep waiting; the run is closed suspended (recovery), as at open.
      const report = await recoverSession(session, recordNow);
      if (report.liveRun) throw runOwnedError(report.liveRun.runId, report.liveRun.owner);
      await syncApprovals();
      return { runId: open.runId, status: "suspended", messages: [], pendingApprovals: report.pendingToolCallIds ?? [] };
    }
    if (isBusy()) throw busyForRun("resumeRun()");
    return start({ type: "TAKEOVER", ...(resumeOptions.reason !== undefined ? { reason: resumeOptions.reason } : {}) }, open.runId);
  }

  const persistSetting = async (entry: Record<string, unknown> & { type: string }) => {
    const event = entryEvent({ runId: "settings" }, entry);
    // After a refused write the log is re-read first (as the next run would), so the setting is not lost.
    if (!isBusy() && writerNow().failure !== undefined) await reload();
    if (isBusy()) {
      deferredSettings.push(event);
      return writerNow().flush();
    }
    writerNow().push(event);
    // Idle: the caller learns of a refused write (the writer is then poisoned until reload).
    return writerNow().commit();
  };

  const busyForRun = (what: string) => {
    const busy = slot.operation();
    return busy === "preparing" || busy === "running"
      ? new SessionBusyError(`${what}: the agent is already running a prompt. Use steer() or followUp() to queue a message, or wait for idle.`, {
          details: { sessionId: session.id, busyWith: busy },
        })
      : sessionBusyError(session.id, busy, what);
  };

  // Decisions one at a time, so two concurrent decisions of one call cannot both be written.
  let decisions: Promise<unknown> = Promise.resolve();
  const decide = (toolCallId: string, status: "approved" | "denied", reason: string | undefined) => {
    const next = decisions.then(async () => {
      await ready;
      if (isWorking()) {
        throw new SessionBusyError(`${status === "approved" ? "approve" : "deny"}(): session ${session.id} is ${slot.operation()}; decide once the run stopped for approval.`, {
          details: { sessionId: session.id, busyWith: slot.operation() },
        });
      }
      await writerNow().flush();
      if (writerNow().failure !== undefined) await reload();
      // Another process may have decided (or resumed) since: decide on what the log holds now.
      await session.refresh?.();
      const result = await recordApprovalDecision(session, { toolCallId, status, ...(reason !== undefined ? { reason } : {}) }, async (events) => {
        writerNow().push(...events);
        await writerNow().commit();
      });
      await syncApprovals();
      return result;
    });
    decisions = next.catch(() => undefined);
    return next;
  };

  const agent: Agent = {
    sessionId: session.id,
    prompt(input, promptOptions = {}) {
      if (isBusy()) throw busyForRun("prompt()");
      return start({ type: "PROMPT", prompts: toAgentMessages(input), ...(promptOptions.prepare ? { prepare: promptOptions.prepare } : {}) });
    },
    continue() {
      if (isWorking()) return Promise.reject(busyForRun("continue()"));
      return start({ type: "CONTINUE" });
    },
    resumeRun,
    approve: (toolCallId, decision = {}) => decide(toolCallId, "approved", decision.reason),
    deny: (toolCallId, decision = {}) => decide(toolCallId, "denied", decision.reason),
    async pendingApprovals() {
      await ready;
      // Idle or waiting: catch up with decisions and resumes of other processes, and let the
      // slot follow them (awaiting-approval ↔ idle), then answer from the log.
      if (!isWorking()) {
        await writerNow().flush();
        await session.refresh?.();
        await syncApprovals();
      }
      return listPendingApprovals(session);
    },
    operation: () => slot.operation(),
    operate: (kind, work) => slot.operate(kind, work),
    writes: slot.writes,
    appendEntry(entry) {
      return persistSetting(entry);
    },
    appendRecords: (events) => recordNow.record(events),
    steer(message, steerOptions) {
      machine().send({ type: "STEER", message: toAgentMessages(message)[0], ...(steerOptions?.delivery === "passive" ? { passive: true } : {}) });
    },
    followUp(message) {
      machine().send({ type: "FOLLOW_UP", message: toAgentMessages(message)[0] });
    },
    clearSteeringQueue() {
      machine().send({ type: "CLEAR", queue: "steering" });
    },
    clearFollowUpQueue() {
      machine().send({ type: "CLEAR", queue: "followUp" });
    },
    clearAllQueues() {
      machine().send({ type: "CLEAR", queue: "all" });
    },
    hasQueuedMessages() {
      if (!actor) return initialQueues.steering.length > 0 || initialQueues.followUp.length > 0 || initialQueues.passive.length > 0;
      const context = actor.getSnapshot().context;
      return context.steering.length > 0 || context.followUp.length > 0 || context.passive.length > 0;
    },
    abort(reason) {
      slot.abort(reason);
    },
    whenReady: () => ready,
    async waitForIdle() {
      await ready.catch(() => undefined);
      while (isWorking() || settled.size > 0) {
        await new Promise<void>((resolve) => {
          const subscription = state$.subscribe((state) => {
            if (state.status === "idle") {
              queueMicrotask(() => subscription.unsubscribe());
              resolve();
            }
          });
        });
        // A compaction or navigation holds the slot while the run status says idle: give its I/O a
        // turn instead of spinning on microtasks (which would starve it for good).
        if (settled.size > 0 || isWorking()) await new Promise((resolve) => setImmediate(resolve));
      }
      await writerNow().flush();
    },
    getState: () => snapshotOf(),
    state$,
    get events$() {
      return (events ??= session.events$());
    },
    runEvents$: defer(() => committed()),
    get auditEvents$() {
      return (audit ??= session.events$().pipe(toAuditEvents()));
    },
    async setModel(next, modelOptions = {}) {
      machine().send({ type: "SETTINGS.SET", change: { model: next, ...(modelOptions.name !== undefined ? { modelName: modelOptions.name } : {}) } });
      scheduleState();
      await persistSetting({ type: "model_change", provider: next.provider, modelId: next.modelId });
    },
    async setThinkingLevel(level) {
      machine().send({ type: "SETTINGS.SET", change: { thinkingLevel: level } });
      scheduleState();
      await persistSetting({ type: "thinking_level_change", thinkingLevel: level });
    },
    async setTools(next, names) {
      machine().send({ type: "SETTINGS.SET", change: { tools: next, ...(names !== undefined ? { activeToolNames: names } : {}) } });
      if (names !== undefined) {
        await persistSetting({ type: "active_tools_change", toolNames: names });
      }
    },
    async reload() {
      if (isWorking()) throw new SessionBusyError("reload(): a run is active; wait for it or abort it first.");
      await ready;
      await reload();
    },
    async dispose() {
      // A session awaiting approval is left waiting: the log holds the open approvals for the next process.
      if (isWorking()) {
        machine().send({ type: "INTERRUPT", reason: "The agent was disposed while a run was active." });
        await agent.waitForIdle();
      }
      await current?.flush();
      actor?.stop();
      disposed = true;
      stateSubject?.complete();
      committedSubject?.complete();
    },
  };
  return agent;
}

/** A result the context's pairing repair made up for a call without one (`store/pairing.ts`). */
function isSynthetic(message: { details?: unknown }): boolean {
  return (message.details as { arborSynthetic?: unknown } | undefined)?.arborSynthetic === true;
}

function writerFailureMessage(error: unknown): string {
  return (
    `The session log refused a write, so the run stopped and wrote nothing more: ${errorMessageOf(error)} ` +
    "Nothing is retried automatically: the session reloads from the log at the next prompt() or continue() (or call reload() now); send the prompt again if it is still wanted."
  );
}

/**
 * The agent machine's `prepareRun` actor: waits for recovery, leases the session (`RunOwnedError` / `SessionBusyError`), closes a stale unfinished
 * run, and builds the run's input from the log and the machine's context only (never a closure), so a process that never saw the run prepares it
 * the same way. A `continue` with nothing to continue from rejects with `InvalidStateError`.
 */
import { fromPromise } from "xstate";
import { InvalidStateError, RunOwnedError, SessionBusyError } from "../core/errors.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { AgentOptions } from "./agent-types.ts";
import type { AgentSettings } from "./agent-settings.ts";
import { isSynthetic, type AgentApprovals } from "./agent-approvals.ts";
import type { AgentWriter } from "./agent-writer.ts";
import { drainCount, type PrepareRunInput, type PrepareRunOutput } from "./agent.machine.ts";
import { OWNER_STOPPED_REASON, planContinuation } from "./continuation.ts";
import { resolveRetrySettings } from "./loop-retry.ts";
import type { ToolRuntime } from "./loop-tools.ts";
import { recoverSession } from "./recovery.ts";
import { findLiveStreamRun } from "./run-lease.ts";
import type { RunOwnership } from "./run-ownership.ts";
import { entryEvent } from "./run-records.ts";
import type { RunKind } from "../core/vocabulary.ts";
import { combineRunPolicies, isEmptyPolicy, type RunPolicy } from "../core/run-policy.ts";
import type { BudgetGate } from "./run-budget.ts";

/** What `prepareRun` needs from its agent. */
export interface PrepareRunDeps {
  session: SessionHandle;
  options: AgentOptions;
  /** The agent machine's settings now. */
  settings: () => AgentSettings;
  writer: AgentWriter;
  ready: () => Promise<void>;
  ownership: RunOwnership;
  reload: () => Promise<void>;
  /** Pushes events through the agent's writer and awaits their commit. */
  record: (events: NewEvent[]) => Promise<void>;
  runtime: ToolRuntime;
  approvals: AgentApprovals;
  /** The agent's budget gate, when it has one: a run's limits are bound to it and recorded in its policy. */
  budget?: BudgetGate;
}

/** The `RunOwnedError` of a takeover refused because a live process holds run `runId`. */
export function runOwnedError(sessionId: string, runId: string, owner: unknown): InstanceType<typeof RunOwnedError> {
  return new RunOwnedError(`Session ${sessionId}: run ${runId} is owned by a live process; it can be resumed once that process stops (or its lease expires).`, {
    details: { sessionId, runId, owner },
  });
}

/** The `prepareRun` actor of one agent (see the module contract). */
export function createPrepareRun(deps: PrepareRunDeps) {
  const { session, options, writer } = deps;
  const hooks = options.hooks ?? {};
  const retry = resolveRetrySettings(options.retry);

  /**
   * The run's policy (`core/run-policy.ts`): this agent's gated tools and the run's limits, combined with `recorded` (the policy the log holds for
   * the run a continuation or a resume carries on; the stricter wins). Binds the limits to the run in the budget gate.
   */
  const runPolicy = (runId: string, recorded: RunPolicy | undefined): { policy?: RunPolicy } => {
    const run = deps.budget?.nextRunBudget();
    const gated = options.requireApproval;
    const own: RunPolicy = { ...(gated === "all" || gated?.length ? { requireApproval: gated } : {}), ...(run ? { budget: run } : {}) };
    const policy = combineRunPolicies(own, recorded);
    deps.budget?.bindRun(runId, policy.budget);
    return isEmptyPolicy(policy) ? {} : { policy };
  };

  /** The run input every kind of run shares: the loop's settings now. */
  const runBase = (runId: string) => {
    const settings = deps.settings();
    return {
      runId,
      toolExecution: options.toolExecution ?? "parallel",
      ...(options.maxToolCallsPerResponse !== undefined ? { maxToolCallsPerResponse: options.maxToolCallsPerResponse } : {}),
      sequentialTools: [...settings.tools.values()].filter((tool) => tool.executionMode === "sequential").map((tool) => tool.name),
      retry,
      model: { ...settings.model },
      hasBetweenTurns: hooks.betweenTurns !== undefined,
      hasOverflowHook: hooks.onContextOverflow !== undefined,
    } as const;
  };

  /**
   * The continuation of the session's open run (`continuation.ts`): refused while a live process holds it; else `run.resumed` and the closed partial
   * are committed, orphaned process groups ended, and the run machine re-enters where the log says the run stopped.
   */
  const prepareTakeover = async (input: PrepareRunInput): Promise<PrepareRunOutput> => {
    await writer.now.flush();
    await session.refresh?.();
    const live = await findLiveStreamRun(session.ownership, session.view.activity);
    if (live) throw runOwnedError(session.id, live.runId, live.owner);
    const plan = planContinuation(session, { runId: input.runId, reason: input.reason ?? OWNER_STOPPED_REASON, getTool: (name) => deps.runtime.getTool(name) });
    writer.now.push(...plan.events);
    await writer.now.commit();
    plan.endOrphans();
    await options.beforeContinue?.();
    return {
      input: {
        ...runBase(input.runId),
        kind: "continue",
        ...runPolicy(input.runId, session.view.activity.openRun?.policy),
        messages: plan.messages,
        prompts: [],
        continuation: plan.continuation,
        ...(plan.resume ? { resume: plan.resume } : {}),
      },
    };
  };

  return fromPromise<PrepareRunOutput, PrepareRunInput>(async ({ input }) => {
    await deps.ready();
    try {
      await deps.ownership.take();
    } catch (error) {
      // A takeover refused by a live owner's lease says so with its own code.
      if (input.kind === "takeover" && SessionBusyError.isInstance(error)) throw runOwnedError(session.id, input.runId, (error.details as { owner?: unknown }).owner);
      throw error;
    }
    if (writer.now.failure !== undefined) await deps.reload();
    if (input.kind === "takeover") return prepareTakeover(input);
    if (session.view.activity.openRun) {
      // The log holds an unfinished run (another live process runs it, or its process is gone and nobody continued it): refuse while it is live, else
      // close it now (interrupted). Catch up with the log first: another process may have ended it since the view was read.
      await deps.reload();
      const report = await recoverSession(session, { record: deps.record });
      if (report.liveRun) {
        throw new SessionBusyError(
          `Session ${session.id} has a run in progress in process ${report.liveRun.owner.pid} on ${report.liveRun.owner.host}; wait for it to finish or stop that process, then reopen the session.`,
          { details: { runId: report.liveRun.runId, owner: report.liveRun.owner } },
        );
      }
    }
    if (input.kind === "resume") {
      // Decisions may come from another process: catch up with the log first.
      await writer.now.flush();
      await session.refresh?.();
    }
    const prepared = input.kind !== "prompt" ? input.prompts : input.prepare ? await input.prepare(input.nextTurn) : [...input.prompts, ...input.nextTurn];
    const { messages: prompts, systemPrompt } = Array.isArray(prepared) ? { messages: prepared, systemPrompt: undefined } : prepared;
    const context = session.view.buildContext();
    // A resume run carries on the suspended run whose calls were decided, and a continue run the work of the last run (one a crash interrupted,
    // one that failed): each keeps that run's policy, combined with this process's. Only a new prompt starts from this process's own.
    const recorded = input.kind === "resume" || input.kind === "continue" ? session.view.activity.runs.at(-1)?.policy : undefined;
    const base = { ...runBase(input.runId), kind: input.kind as RunKind, ...runPolicy(input.runId, recorded), messages: context.messages } as const;
    const settingsEvents: NewEvent[] = [];
    const scope = { runId: input.runId };
    const { model, thinkingLevel } = deps.settings();
    if (!context.model || context.model.provider !== model.provider || context.model.modelId !== model.modelId) {
      settingsEvents.push(entryEvent(scope, { type: "model_change", provider: model.provider, modelId: model.modelId }));
    }
    if (context.thinkingLevel !== thinkingLevel) settingsEvents.push(entryEvent(scope, { type: "thinking_level_change", thinkingLevel }));
    if (settingsEvents.length) writer.now.push(...settingsEvents);
    if (input.kind === "prompt") return { input: { ...base, prompts, ...(systemPrompt !== undefined ? { systemPrompt } : {}) } };
    if (input.kind === "resume") {
      const resume = deps.approvals.resumeOf(context.messages, input.abort);
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
        return { input: { ...base, prompts: input.steering.slice(0, count), skipInitialSteering: true }, drained: { queue: "steering", count } };
      }
      if (input.followUp.length > 0) {
        const count = drainCount(input.followUp, input.followUpMode);
        return { input: { ...base, prompts: input.followUp.slice(0, count) }, drained: { queue: "followUp", count } };
      }
      throw new InvalidStateError("Cannot continue from message role: assistant. The last reply is complete; prompt, steer or follow up instead.");
    }
    return { input: { ...base, prompts: [] } };
  });
}

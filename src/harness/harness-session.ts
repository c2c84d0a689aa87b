/**
 * The Session API: one session driven by one agent, with the harness's models, tools, resources and hooks (pi's Agent / AgentSession semantics).
 * `prompt()` throws `SessionBusyError` while a run is starting or active, expands commands, runs `beforeAgentStart` and resolves with the outcome
 * once committed (failures are data). Settings changes are logged as entries; the agent's session-actor state holds them, never a copy here. No
 * API key, header or metadata value is ever written to the log.
 */
import type { Subscription } from "rxjs";
import { moveTo as moveLeafTo } from "../compaction/branch-summary.ts";
import { compact as compactSession } from "../compaction/compact.ts";
import type { CustomEntry, SessionEntry } from "../core/entries.ts";
import { EntryNotFoundError, HarnessConfigError, InvalidArgumentError, InvalidStateError, SessionBusyError } from "../core/errors.ts";
import { THINKING_LEVELS, type AgentMessage, type CustomMessage, type ImageContent } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { AgentTool } from "../core/tools.ts";
import type { Agent, AgentOptions, RunOutcome } from "../machines/agent-types.ts";
import { isArborEventType, onEventType, type ArborEventHandler, type ArborEventType } from "../store/events/catalogue.ts";
import type { SessionHandle, SessionRepository } from "../store/session-types.ts";
import type { HarnessSession, LoadedResources, PromptOptions } from "./harness-session-types.ts";
import type { HandlerOf, HookName } from "./hook-types.ts";
import { createHookRunner, type HookRecord, type HookRunner } from "./hooks.ts";
import { createLoopHooks } from "./loop-hooks.ts";
import type { ModelRegistry } from "./model-registry.ts";
import type { AgentHarnessOptions } from "./options.ts";
import { buildPromptMessages } from "./prompt-input.ts";
import { buildSystemPrompt } from "./system-prompt.ts";
import { resolveTelemetry } from "../telemetry/options.ts";
import { createSessionTelemetry } from "../telemetry/session-telemetry.ts";
import { otelApi } from "../telemetry/otel-api.ts";
import { sessionBusyError } from "../machines/session-actor.ts";
import { harnessInspection } from "./inspection.ts";
import { createSessionWorkspace } from "./workspace/session-workspace.ts";
import { createSessionMemory } from "./memory/session-memory.ts";
import { createMemoryTools } from "./memory/memory-tools.ts";
import { SerialWork } from "./serial-work.ts";
import { sessionCompaction } from "./session-compaction.ts";
import { sessionBudget } from "./budget-options.ts";
import { ignoreError } from "../core/ignored.ts";

export type * from "./harness-session-types.ts";

/** What a session needs from its harness. */
export interface HarnessSessionConfig {
  options: AgentHarnessOptions;
  registry: ModelRegistry;
  tools: AgentTool<any, any, any>[];
  resources: LoadedResources;
  cwd: string;
  repository?: SessionRepository;
  createAgent: (options: AgentOptions) => Agent;
  /** Opens a harness session over a forked handle. */
  openForked: (session: SessionHandle) => Promise<HarnessSession>;
}

/** Drives `session` with a new agent (see the module contract). */
export async function createHarnessSession(config: HarnessSessionConfig, session: SessionHandle): Promise<HarnessSession> {
  const { options, registry } = config;
  // The recorded workspace (opt-in): tools are wrapped so each call's changed files commit with its result.
  if (options.workspace && !config.repository) throw new HarnessConfigError("workspace: the harness was given a bare session; pass repository, eventLog or eventLogPath to record its workspace.", { details: { field: "workspace" } });
  const workspace =
    options.workspace && config.repository
      ? createSessionWorkspace({ session, log: config.repository.log, options: options.workspace, append: (events) => agent.appendRecords(events), appendEntry: async (entry, events) => void (await agent.writes.appendEntries([entry], { extraEvents: events })), isBusy: () => isBusy() })
      : undefined;
  if (options.memory && !config.repository) throw new HarnessConfigError("memory: the harness was given a bare session; pass repository, eventLog or eventLogPath to keep its memory.", { details: { field: "memory" } });
  const memory =
    options.memory && config.repository
      ? createSessionMemory({ session, log: config.repository.log, options: options.memory, append: (events) => agent.appendRecords(events) })
      : undefined;
  const ownTools = memory && options.memory?.tools ? [...config.tools, ...createMemoryTools(memory, { principal: options.memory.principal !== undefined })] : config.tools;
  const tools = workspace ? workspace.wrapTools(ownTools) : ownTools;
  const resources: LoadedResources = { skills: [...config.resources.skills], promptTemplates: [...config.resources.promptTemplates] };
  const logged = session.view.buildContext();
  const initialModelName = options.model ?? (logged.model && registry.findByModel(logged.model)?.name) ?? registry.defaultName;
  const initialActiveToolNames = options.activeToolNames ?? logged.activeToolNames?.filter((name) => tools.some((tool) => tool.name === name)) ?? tools.map((tool) => tool.name);
  // Hook records, through the session writer in call order; the first refused one is reported by the next settle().
  const records = new SerialWork();
  // Retry hooks observe the logged retry events in log order, without blocking the run.
  const retryObservers = new SerialWork();

  const baseSystemPrompt = () =>
    buildSystemPrompt({
      systemPrompt: options.systemPrompt,
      tools: tools.filter((tool) => activeToolNames().includes(tool.name)),
      skills: resources.skills,
      cwd: config.cwd,
      ...(options.contextFiles ? { contextFiles: options.contextFiles } : {}),
    });

  // The model's name and the active tools are the session actor's state (`agent-settings.ts`), not closures here.
  const modelName = (): string => {
    const state = agent.getState();
    return state.modelName ?? registry.findByModel(state.model)?.name ?? initialModelName;
  };
  const activeToolNames = (): string[] => agent.getState().activeToolNames ?? tools.map((tool) => tool.name);
  const record = (entry: HookRecord) => {
    if (entry.type === "hook.applied" && (entry.data.hook === "toolResult" || (entry.data.hook === "toolCall" && !entry.data.changes.includes("block")))) return;
    const runId = agent.getState().runId;
    const event = { type: entry.type, data: entry.data, metadata: { ...entry.metadata, ...(runId ? { runId } : {}) } };
    // Through the session writer (the one write path); a refusal is reported by the next settle().
    records.run(() => agent.appendRecords([event]));
  };
  const runner: HookRunner = createHookRunner({ hooks: options.hooks, record });
  const telemetrySettings = resolveTelemetry(options.telemetry, options.secrets);
  const telemetry = telemetrySettings
    ? createSessionTelemetry(telemetrySettings, {
        sessionId: session.id,
        agentName: () => {
          const named = session.view.info.metadata?.agent;
          return typeof named === "string" && named !== "" ? named : telemetrySettings.agentName;
        },
      })
    : undefined;
  const instrument = (client: ModelClient): ModelClient => (telemetry ? telemetry.instrument(client) : client);
  const loopHooks = createLoopHooks({
    runner,
    // A run's `beforeAgentStart` replacement is its own (the agent's run input), not held here.
    systemPrompt: () => baseSystemPrompt(),
    model: () => registry.get(modelName()),
    streamOptions: options.streamOptions,
    secrets: options.secrets,
  });
  const currentModel = () => instrument(registry.get(modelName()).client);
  const compaction = sessionCompaction({ session, runner, telemetry, settings: options.compaction, model: currentModel, instrument, thinkingLevel: () => agent.getState().thinkingLevel });
  const { compactionCallbacks, treeCallbacks, settings: compactionSettings } = compaction;
  const retry = {
    ...(options.streamOptions?.maxRetries !== undefined ? { maxRetries: options.streamOptions.maxRetries } : {}),
    ...(options.streamOptions?.maxRetryDelayMs !== undefined ? { maxDelayMs: options.streamOptions.maxRetryDelayMs } : {}),
    ...options.retry,
  };
  const inspect = harnessInspection(options.inspect, session.id);
  const budget = sessionBudget(options.budget, config.repository?.log, session);
  const agent: Agent = config.createAgent({
    session,
    model: instrument(registry.get(initialModelName).client),
    modelName: initialModelName,
    tools,
    activeToolNames: initialActiveToolNames,
    thinkingLevel: options.thinkingLevel ?? logged.thinkingLevel,
    steeringMode: options.steeringMode,
    followUpMode: options.followUpMode,
    toolExecution: options.toolExecution,
    ...(options.maxToolCallsPerResponse !== undefined ? { maxToolCallsPerResponse: options.maxToolCallsPerResponse } : {}),
    ...(options.requireApproval !== undefined ? { requireApproval: options.requireApproval } : {}),
    ...(options.durability !== undefined ? { durability: options.durability } : {}),
    ...(options.leaseTtlMs !== undefined ? { leaseTtlMs: options.leaseTtlMs } : {}),
    // A continued run first gets its files at the last committed checkpoint (`docs/workspace.md`).
    ...(workspace ? { beforeContinue: () => workspace.recorder.continueAtLeaf() } : {}),
    retry,
    hooks: { ...loopHooks, ...compaction.loopHooks },
    toolContext: options.toolContext,
    // Tools that write output outside the log (bash spill files) redact these too.
    ...(options.secrets?.length ? { secrets: options.secrets } : {}),
    ...(inspect !== undefined ? { inspect } : {}),
    ...(budget ? { budget: budget.attach } : {}),
  });
  // Crash recovery finishes before the session is handed back (ours).
  try {
    await agent.whenReady();
  } catch (error) {
    await agent.dispose().catch(ignoreError("disposing an agent whose recovery failed; the recovery error is thrown"));
    throw error;
  }
  if (options.activeToolNames && JSON.stringify(options.activeToolNames) !== JSON.stringify(logged.activeToolNames)) {
    await agent.setTools(tools, initialActiveToolNames);
  }

  telemetry?.observe(agent.runEvents$);

  const retrySubscription: Subscription = agent.runEvents$.subscribe((event) => {
    if (event.type === "retry.scheduled") retryObservers.run(() => runner.observe("retryScheduled", event.data));
    else if (event.type === "retry.started") retryObservers.run(() => runner.observe("retryAttemptStart", event.data));
    else if (event.type === "retry.ended") retryObservers.run(() => runner.observe("retryFinished", event.data));
  });

  // One answer to "busy?": the session actor's operation slot.
  const isBusy = () => agent.operation() !== "idle";
  const settle = async () => {
    await retryObservers.settled();
    await records.settled();
  };

  async function startPrompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[], promptOptions?: PromptOptions): Promise<RunOutcome> {
    telemetry?.nextRun(promptOptions, otelApi().context.active());
    // Expansion and beforeAgentStart run inside the slot's `preparing`, so the session is busy from this call on, and an abort() meanwhile aborts the
    // run as soon as it starts. The messages held for the next turn come from the session actor; a `beforeAgentStart` system prompt is this run's own
    // (kept in its run input by the agent).
    const prepare = async (nextTurn: AgentMessage[]) => {
      const built = buildPromptMessages(input, images, {
        templates: resources.promptTemplates,
        skills: resources.skills,
        enableSkillCommands: options.enableSkillCommands,
      }, nextTurn);
      const base = baseSystemPrompt();
      const started = await runner.beforeAgentStart({ prompt: built.text, images: images ?? [], messages: built.messages, systemPrompt: base });
      return { messages: started.messages, ...(started.systemPrompt === base ? {} : { systemPrompt: started.systemPrompt }) };
    };
    budget?.nextRun(promptOptions?.budget);
    const outcome = await agent.prompt([], { prepare });
    await settle();
    return outcome;
  }

  // Work the log has not seen (a crash mid-call, edits between runs) is recorded before anything
  // runs; a run continued at open does it itself, after its takeover (`beforeContinue`).
  const continuing = agent.operation() === "preparing" || agent.operation() === "running";
  if (!continuing) await workspace?.recorder.sync();

  const harnessSession: HarnessSession = {
    id: session.id,
    session,
    agent,
    ...(workspace ? { workspace: workspace.api } : {}),
    ...(memory ? { memory } : {}),
    prompt(input, images, promptOptions) {
      if (isBusy()) {
        const busy = agent.operation();
        // Only a run takes steering and follow-ups; anything else names what holds the slot.
        if (busy !== "running" && busy !== "preparing") throw sessionBusyError(session.id, busy, "prompt()");
        throw new SessionBusyError("A run is active. Use steer() or followUp() to queue a message, or wait for idle.", { details: { busyWith: busy } });
      }
      return startPrompt(input, images, promptOptions);
    },
    steer: (message, steerOptions) => agent.steer(message, steerOptions),
    followUp: (message) => agent.followUp(message),
    async continue(continueOptions) {
      telemetry?.nextRun(continueOptions, otelApi().context.active());
      budget?.nextRun(continueOptions?.budget);
      const outcome = await agent.continue();
      await settle();
      return outcome;
    },
    async resumeRun(resumeOptions) {
      const outcome = await agent.resumeRun(resumeOptions);
      await settle();
      return outcome;
    },
    approve: (toolCallId, decision) => agent.approve(toolCallId, decision),
    deny: (toolCallId, decision) => agent.deny(toolCallId, decision),
    pendingApprovals: () => agent.pendingApprovals(),
    abort(reason) {
      // Aborts whatever holds the slot: a run (also while it is being prepared), a compaction or a navigation.
      agent.abort(reason);
    },
    async waitForIdle() {
      await agent.waitForIdle();
      await settle();
    },
    clearSteeringQueue: () => agent.clearSteeringQueue(),
    clearFollowUpQueue: () => agent.clearFollowUpQueue(),
    clearAllQueues: () => agent.clearAllQueues(),
    hasQueuedMessages: () => agent.hasQueuedMessages(),
    getState: () => ({
      ...agent.getState(),
      sessionId: session.id,
      modelName: modelName(),
      activeToolNames: [...activeToolNames()],
      leafId: session.view.leafId,
      sessionName: session.view.name,
      systemPrompt: baseSystemPrompt(),
    }),
    events$: agent.events$,
    auditEvents$: agent.auditEvents$,
    async setModel(name) {
      const next = registry.get(name);
      const previous = registry.get(modelName());
      await agent.setModel(instrument(next.client), { name });
      await runner.observe("modelUpdate", {
        model: name,
        provider: next.client.provider,
        modelId: next.client.modelId,
        previous: { model: previous.name, provider: previous.client.provider, modelId: previous.client.modelId },
      });
      await settle();
    },
    async setThinkingLevel(level) {
      if (!THINKING_LEVELS.includes(level)) throw new InvalidArgumentError(`setThinkingLevel(): "${String(level)}" is not one of ${THINKING_LEVELS.join(", ")}.`);
      const previous = agent.getState().thinkingLevel;
      await agent.setThinkingLevel(level);
      await runner.observe("thinkingLevelUpdate", { thinkingLevel: level, previous });
      await settle();
    },
    async setActiveTools(names) {
      const unknown = names.filter((name) => !tools.some((tool) => tool.name === name));
      if (unknown.length) throw new InvalidArgumentError(`setActiveTools(): unknown tool(s) ${unknown.map((name) => `"${name}"`).join(", ")}; known: ${tools.map((tool) => tool.name).join(", ") || "none"}.`);
      const previous = activeToolNames();
      await agent.setTools(tools, [...names]);
      await runner.observe("toolsUpdate", { activeToolNames: activeToolNames(), previous });
      await settle();
    },
    async setResources(next) {
      if (next.skills) resources.skills = [...next.skills];
      if (next.promptTemplates) resources.promptTemplates = [...next.promptTemplates];
      const names = { skills: resources.skills.map((skill) => skill.name), promptTemplates: resources.promptTemplates.map((template) => template.name) };
      // A setting like the model: through the session writer, queued while the slot is busy.
      await agent.appendEntry({ type: "custom", customType: "arbor.resources", data: names });
      await runner.observe("resourcesUpdate", names);
      await settle();
    },
    async moveTo(entryId, moveOptions = {}) {
      try {
        const move = () => moveLeafTo(session, entryId, { ...moveOptions, model: currentModel(), settings: compactionSettings, hooks: treeCallbacks });
        return await (telemetry && moveOptions.summarize ? telemetry.operation("branch_summary", { eager: true }, move) : move());
      } finally {
        await settle();
      }
    },
    async compact(customInstructions) {
      try {
        const run = () =>
          compactSession(session, {
            model: currentModel(),
            settings: compactionSettings,
            customInstructions,
            thinkingLevel: agent.getState().thinkingLevel,
            hooks: compactionCallbacks,
          });
        return await (telemetry ? telemetry.operation("compaction", { reason: "manual", eager: true }, run) : run());
      } finally {
        await settle();
      }
    },
    async fork(entryId) {
      if (!config.repository) throw new InvalidStateError("fork(): the harness was given a session without a repository; pass repository or eventLog to fork.");
      if (entryId !== undefined && !session.view.getEntry(entryId)) throw new EntryNotFoundError(`fork(): no entry "${entryId}" in session ${session.id}.`);
      // The live leaf is mid-run (a call may still wait for its result): forking it would copy a half-written turn.
      if (isBusy() && (entryId === undefined || entryId === session.view.leafId)) {
        throw new SessionBusyError(`fork(): session ${session.id} is busy (${agent.operation()}) and its leaf is still being written; fork an earlier entry, or wait for idle.`, {
          details: { sessionId: session.id, busyWith: agent.operation() },
        });
      }
      await settle();
      return config.openForked(await config.repository.fork(session.id, entryId === undefined ? {} : { entryId }));
    },
    async label(entryId, label) {
      if (!session.view.getEntry(entryId)) throw new EntryNotFoundError(`label(): no entry "${entryId}" in session ${session.id}.`);
      // Through the session writer: at once when idle; queued until the run or operation ends otherwise.
      await agent.appendEntry({ type: "label", targetId: entryId, ...(label === undefined ? {} : { label }) });
    },
    async setName(name) {
      await agent.appendEntry({ type: "session_info", name });
    },
    async appendCustomEntry(customType, data) {
      if (typeof customType !== "string" || customType === "") throw new InvalidArgumentError("appendCustomEntry(): customType must be a non-empty string.");
      // Through the session's one writer (after what a run pushed); a refused append rejects.
      const [entry] = await agent.writes.appendEntries([{ type: "custom", customType, ...(data === undefined ? {} : { data }) }]);
      return entry as SessionEntry as CustomEntry;
    },
    async appendCustomMessage(customType, content, messageOptions = {}) {
      if (typeof customType !== "string" || customType === "") throw new InvalidArgumentError("appendCustomMessage(): customType must be a non-empty string.");
      const message: CustomMessage = {
        role: "custom",
        customType,
        content,
        display: messageOptions.display ?? true,
        ...(messageOptions.details === undefined ? {} : { details: messageOptions.details }),
        timestamp: Date.now(),
      };
      if (messageOptions.deliverAs === "nextTurn" || (messageOptions.deliverAs === "passive" && !isBusy())) {
        agent.steer(message, { delivery: "nextTurn" });
      } else if (isBusy()) {
        if (messageOptions.deliverAs === "followUp") agent.followUp(message);
        else agent.steer(message, messageOptions.deliverAs === "passive" ? { delivery: "passive" } : undefined);
      } else if (messageOptions.triggerTurn) {
        await harnessSession.prompt(message);
      } else {
        await agent.writes.appendEntries([{
          type: "custom_message",
          customType,
          content,
          display: message.display,
          ...(message.details === undefined ? {} : { details: message.details }),
        }]);
      }
    },
    async reload() {
      if (isBusy()) throw new SessionBusyError("reload(): a run is active; abort it or wait for idle first.");
      await settle();
      await agent.reload();
    },
    getStats: () => session.view.getStats(),
    on: ((name: HookName | ArborEventType, handler: (event: never) => unknown) =>
      isArborEventType(name)
        ? onEventType(session.events$({ fromVersion: session.view.version }), name, handler as ArborEventHandler<typeof name>)
        : runner.on(name, handler as HandlerOf<typeof name>)) as HarnessSession["on"],
    async dispose() {
      await agent.dispose();
      retrySubscription.unsubscribe();
      telemetry?.close();
      await settle();
    },
  };
  return harnessSession;
}

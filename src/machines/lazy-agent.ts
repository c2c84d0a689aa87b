/**
 * The agent of an idle session, built on first use (ours).
 *
 * Contract:
 * - `createAgent` returns a {@link LazyAgent} when the session needs no start-up work: no open
 *   run, no open summary intent and no open approval in its activity projection (so crash
 *   recovery has nothing to close and the slot starts idle) and no `inspect` option; otherwise
 *   it builds the agent at once, as before;
 * - a lazy agent is the same {@link Agent}: every method and stream builds the real agent
 *   (`build`) on first use and delegates to it; until then it holds only its options.
 *   `operation()`, `hasQueuedMessages()`, `getState()`, `whenReady()`, `waitForIdle()`, `abort()`
 *   and `dispose()` do not build it (they answer what the idle agent would: "idle", the log's
 *   queues, the settings of its options or else of the session's context — model, registered
 *   name, active tools, thinking level — nothing to wait for or stop);
 * - it registers itself as the session's actor (`registerSessionActor`) at once, so compaction
 *   and navigation on the session find it (and build the agent) instead of making a second slot;
 *   methods live on the prototype, so an idle agent costs one small object.
 *
 * @example
 * ```ts
 * const agent = createAgent({ session, model }); // a LazyAgent for an idle session
 * agent.operation(); // "idle", nothing built
 * await agent.prompt("hi"); // builds the agent, then runs
 * ```
 */
import type { Observable } from "rxjs";
import type { AgentMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { ArborEvent } from "../store/events/catalogue.ts";
import type { AuditEvent } from "../store/events/audit.ts";
import type { SessionActivity } from "../store/session-activity.ts";
import type { Agent, AgentOptions, AgentStateSnapshot, PromptOptions, ResumeRunOptions } from "./agent-types.ts";
import { approvalsOf, openApprovals } from "./approval-fold.ts";
import { registerSessionActor, type SessionOperation } from "./session-actor.ts";
import type { SessionWrites } from "./session-slot.ts";

/** True when an agent on a session with this activity has nothing to do at start-up (see the module contract). */
export function idleAtStart(activity: SessionActivity): boolean {
  return activity.openRun === undefined && activity.summaries.length === 0 && openApprovals(approvalsOf(activity)).length === 0;
}

const READY: Promise<void> = Promise.resolve();

/** An {@link Agent} that builds the real one on first use (see the module contract). */
export class LazyAgent implements Agent {
  readonly sessionId: string;
  #options: AgentOptions | undefined;
  #build: ((options: AgentOptions) => Agent) | undefined;
  #agent: Agent | undefined;

  constructor(options: AgentOptions, build: (options: AgentOptions) => Agent) {
    this.sessionId = options.session.id;
    this.#options = options;
    this.#build = build;
    registerSessionActor(options.session, this);
  }

  /** The real agent, built now if it was not. */
  #real(): Agent {
    if (this.#agent) return this.#agent;
    const agent = this.#build!(this.#options!);
    this.#agent = agent;
    this.#build = undefined;
    return agent;
  }

  get writes(): SessionWrites {
    return this.#real().writes;
  }
  operation(): SessionOperation {
    return this.#agent ? this.#agent.operation() : "idle";
  }
  operate<T>(kind: "compacting" | "navigating", work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.#real().operate(kind, work);
  }
  abort(reason?: string): void {
    this.#agent?.abort(reason);
  }
  prompt(input: string | AgentMessage | AgentMessage[], options?: PromptOptions) {
    return this.#real().prompt(input, options);
  }
  resumeRun(options?: ResumeRunOptions) {
    return this.#real().resumeRun(options);
  }
  continue() {
    return this.#real().continue();
  }
  approve(toolCallId: string, decision?: { reason?: string }) {
    return this.#real().approve(toolCallId, decision);
  }
  deny(toolCallId: string, decision?: { reason?: string }) {
    return this.#real().deny(toolCallId, decision);
  }
  pendingApprovals() {
    return this.#real().pendingApprovals();
  }
  steer(message: string | AgentMessage, options?: { delivery?: "active" | "passive" }): void {
    this.#real().steer(message, options);
  }
  followUp(message: string | AgentMessage): void {
    this.#real().followUp(message);
  }
  clearSteeringQueue(): void {
    this.#real().clearSteeringQueue();
  }
  clearFollowUpQueue(): void {
    this.#real().clearFollowUpQueue();
  }
  clearAllQueues(): void {
    this.#real().clearAllQueues();
  }
  hasQueuedMessages(): boolean {
    if (this.#agent) return this.#agent.hasQueuedMessages();
    const { queues } = this.#options!.session.view.activity;
    return queues.steering.length > 0 || queues.followUp.length > 0 || queues.passive.length > 0;
  }
  waitForIdle(): Promise<void> {
    return this.#agent ? this.#agent.waitForIdle() : READY;
  }
  whenReady(): Promise<void> {
    return this.#agent ? this.#agent.whenReady() : READY;
  }
  getState(): AgentStateSnapshot {
    if (this.#agent) return this.#agent.getState();
    // What the idle agent's snapshot holds (agent.ts `snapshotOf` before its machine exists).
    const { session, model, modelName, activeToolNames, thinkingLevel } = this.#options!;
    const context = activeToolNames === undefined || thinkingLevel === undefined ? session.view.buildContext() : undefined;
    const active = activeToolNames ?? context!.activeToolNames;
    const { steering, followUp } = session.view.activity.queues;
    return {
      status: "idle",
      operation: "idle",
      pendingToolCalls: [],
      steeringQueue: steering,
      followUpQueue: followUp,
      thinkingLevel: thinkingLevel ?? context!.thinkingLevel,
      model: { provider: model.provider, modelId: model.modelId },
      activeToolNames: active === null ? null : [...active],
      ...(modelName !== undefined ? { modelName } : {}),
    };
  }
  get state$(): Observable<AgentStateSnapshot> {
    return this.#real().state$;
  }
  get events$(): Observable<ArborEvent> {
    return this.#real().events$;
  }
  get runEvents$(): Observable<ArborEvent> {
    return this.#real().runEvents$;
  }
  get auditEvents$(): Observable<AuditEvent> {
    return this.#real().auditEvents$;
  }
  setModel(model: AgentOptions["model"], options?: { name?: string }) {
    return this.#real().setModel(model, options);
  }
  setThinkingLevel(level: Parameters<Agent["setThinkingLevel"]>[0]) {
    return this.#real().setThinkingLevel(level);
  }
  setTools(tools: Parameters<Agent["setTools"]>[0], activeToolNames?: string[]) {
    return this.#real().setTools(tools, activeToolNames);
  }
  appendEntry(entry: Record<string, unknown> & { type: string }) {
    return this.#real().appendEntry(entry);
  }
  appendRecords(events: NewEvent[]) {
    return this.#real().appendRecords(events);
  }
  reload() {
    return this.#real().reload();
  }
  dispose(): Promise<void> {
    return this.#agent ? this.#agent.dispose() : READY;
  }
}

/**
 * The agent of an idle session, built on first use: when the session has no open run, summary intent or approval and no `inspect`, `createAgent`
 * returns a {@link LazyAgent} that builds the real agent on the first call that needs it (`operation()`, `getState()`, `abort()` and the like answer
 * as the idle agent would). It registers as the session's actor at once, so an idle agent costs one small object.
 */
import type { Observable } from "rxjs";
import type { AgentMessage } from "../core/messages.ts";
import type { NewEvent } from "../store/event-log.ts";
import type { ArborEvent } from "../store/events/catalogue.ts";
import type { AuditEvent } from "../store/events/audit.ts";
import type { SessionActivity } from "../store/session/session-activity.ts";
import type { Agent, AgentOptions, AgentStateSnapshot, PromptOptions, ResumeRunOptions, SteerDelivery } from "./agent-types.ts";
import { approvalsOf, openApprovals } from "./approval-fold.ts";
import { registerSessionActor, type SessionOperation } from "./session-actor.ts";
import type { SessionWrites, SlotWork } from "./session-slot.ts";

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
  operate<T>(kind: SlotWork, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
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
  steer(message: string | AgentMessage, options?: { delivery?: SteerDelivery }): void {
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

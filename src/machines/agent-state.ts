/**
 * The agent's observable state (`getState()`, `state$`) and committed-events stream (`runEvents$`), both derived: {@link agentStateOf} is a pure
 * function of the machine's snapshot; {@link AgentStreams} republishes it at most once per microtask and forwards the writer's commits, creating its
 * subjects only once someone subscribed.
 */
import type { Observable } from "rxjs";
import { behaviorSubject, defer, subject, type BehaviorSubject, type Subject } from "../core/rx.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { StoredEvent } from "../store/event-log.ts";
import { isArborEvent, type ArborEvent } from "../store/events/catalogue.ts";
import type { AgentStateSnapshot } from "./agent-types.ts";
import type { AgentSettings } from "./agent-settings.ts";
import { operationOf, type AgentMachineSnapshot } from "./agent.machine.ts";
import { runningCalls } from "./run-batch.ts";
import type { RunContext } from "./run-types.ts";

/** What the agent reports before its machine exists: its starting settings and the log's queues. */
export interface AgentStateStart {
  settings: AgentSettings;
  queues: { steering: AgentMessage[]; followUp: AgentMessage[] };
}

/** The agent's state as `getState()` reports it, read from the agent machine's snapshot. */
export function agentStateOf(snapshot: AgentMachineSnapshot | undefined, start: AgentStateStart): AgentStateSnapshot {
  const settings = snapshot?.context.settings ?? start.settings;
  const run = snapshot?.children.run?.getSnapshot() as { value: unknown; context: RunContext } | undefined;
  const operation = snapshot ? operationOf(snapshot) : "idle";
  // awaiting-approval is not running: nothing happens until a decision and continue().
  const running = operation === "preparing" || operation === "running";
  const batch = run?.context.batch;
  const { activeToolNames: active, modelName } = settings;
  const state: AgentStateSnapshot = {
    status: running ? "running" : "idle",
    operation,
    pendingToolCalls: batch ? runningCalls(batch) : [],
    steeringQueue: snapshot ? snapshot.context.steering : start.queues.steering,
    followUpQueue: snapshot ? snapshot.context.followUp : start.queues.followUp,
    thinkingLevel: settings.thinkingLevel,
    model: { provider: settings.model.provider, modelId: settings.model.modelId },
    activeToolNames: active === null ? null : [...active],
  };
  if (modelName !== undefined) state.modelName = modelName;
  const runId = snapshot?.context.request?.runId;
  if (running && runId) state.runId = runId;
  if (run?.value === "streaming" && run.context.partial) state.streamingMessage = run.context.partial;
  const lastError = snapshot?.context.lastError;
  if (lastError) state.errorMessage = lastError;
  return state;
}

/** The agent's `state$` and `runEvents$` (see the module contract). */
export class AgentStreams {
  readonly state$: Observable<AgentStateSnapshot>;
  readonly runEvents$: Observable<ArborEvent>;
  #read: () => AgentStateSnapshot;
  #state: BehaviorSubject<AgentStateSnapshot> | undefined;
  #committed: Subject<ArborEvent> | undefined;
  #scheduled = false;
  #completed = false;

  constructor(read: () => AgentStateSnapshot) {
    this.#read = read;
    this.state$ = defer(() => (this.#state ??= this.#subject(behaviorSubject(this.#read()))));
    this.runEvents$ = defer(() => (this.#committed ??= this.#subject(subject<ArborEvent>())));
  }

  /** Publishes the state to `state$` at the end of this microtask (once, however often called). */
  schedule(): void {
    if (this.#scheduled || !this.#state) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#state?.next(this.#read());
    });
  }

  /** Forwards events the session writer committed to `runEvents$`. */
  committed(events: readonly StoredEvent[]): void {
    if (!this.#committed) return;
    for (const event of events) if (isArborEvent(event)) this.#committed.next(event);
  }

  /** Completes both streams (the agent was disposed). */
  complete(): void {
    this.#completed = true;
    this.#state?.complete();
    this.#committed?.complete();
  }

  #subject<S extends { complete(): void }>(subject: S): S {
    if (this.#completed) subject.complete();
    return subject;
  }
}

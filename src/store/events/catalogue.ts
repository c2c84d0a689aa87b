/**
 * The event catalogue (ours; narrowing after xstate's typed `actor.on` and NgRx's `ofType`): every logged event type of Arbor declared once (type,
 * schema version, zod schema), and the `ArborEvent` union derived from it, whose `switch (event.type)` narrows `data`. Since the log validates on
 * write and upcasts on read (`upcast.ts`), a stored catalogue event holds exactly its current data; `isArborEvent` is the one guard from a
 * `StoredEvent`.
 */
import type { Observable, OperatorFunction } from "rxjs";
import { filter } from "../../core/rx.ts";
import type { z } from "zod";
import type { StoredEvent } from "../event-log.ts";
import type { AgentMessage, Usage } from "../../core/messages.ts";
import { AGENT_EVENT_SCHEMAS } from "./agent-events.ts";
import { messageEndedSchema, queueChangedSchema, RUN_EVENT_SCHEMAS } from "./run-events.ts";
import { SESSION_EVENT_SCHEMAS, type EntryAppendedData, type LeafMovedData, type SessionCreatedData } from "./session-events.ts";
import { SUMMARY_EVENT_SCHEMAS } from "./summary-events.ts";
import { TASK_EVENT_SCHEMAS } from "./task-events.ts";
import { WORKFLOW_EVENT_SCHEMAS } from "./workflow-events.ts";
import { CONTROL_EVENT_SCHEMAS } from "./control-events.ts";
import { WORKSPACE_EVENT_SCHEMAS } from "./workspace-events.ts";
import { MEMORY_EVENT_SCHEMAS } from "./memory-events.ts";
import { ELICITATION_EVENT_SCHEMAS } from "./elicitation-events.ts";
import { BUDGET_EVENT_SCHEMAS } from "./budget-events.ts";

/**
 * Every built-in event type with its current schema version and schema.
 *
 * @example
 * ```ts
 * const { version, schema } = EVENT_CATALOGUE["tool.ended"];
 * schema.parse(event.data);
 * ```
 */
export const EVENT_CATALOGUE = { ...SESSION_EVENT_SCHEMAS, ...RUN_EVENT_SCHEMAS, ...AGENT_EVENT_SCHEMAS, ...SUMMARY_EVENT_SCHEMAS, ...WORKFLOW_EVENT_SCHEMAS, ...WORKSPACE_EVENT_SCHEMAS, ...MEMORY_EVENT_SCHEMAS, ...TASK_EVENT_SCHEMAS, ...CONTROL_EVENT_SCHEMAS, ...ELICITATION_EVENT_SCHEMAS, ...BUDGET_EVENT_SCHEMAS } as const;

type Catalogue = typeof EVENT_CATALOGUE;

/** A built-in logged event type, e.g. `"tool.ended"`. */
export type ArborEventType = keyof Catalogue;

/**
 * Events whose data type is (or holds) a hand-written contract type: their schemas are loose (unknown fields kept, for pi imports), the contract
 * types are exact.
 */
interface ContractData {
  "session.created": SessionCreatedData;
  "entry.appended": EntryAppendedData;
  "leaf.moved": LeafMovedData;
  "message.ended": Omit<z.output<typeof messageEndedSchema>, "usage"> & { usage?: Usage };
  "queue.changed": Omit<z.output<typeof queueChangedSchema>, "message"> & { message?: AgentMessage };
}

/** The `data` of a built-in event type (its schema's output). */
export type ArborEventData<Type extends ArborEventType> = Type extends keyof ContractData ? ContractData[Type] : z.output<Catalogue[Type]["schema"]>;

/** The stored event of one built-in type. */
export type ArborEventOf<Type extends ArborEventType> = StoredEvent<Type, ArborEventData<Type>>;

/** Every stored event of the catalogue, discriminated by `type`. */
export type ArborEvent = { [Type in ArborEventType]: ArborEventOf<Type> }[ArborEventType];

/**
 * True when `event.type` is a built-in type: the event is then an {@link ArborEvent} (the log validated and upcast it). Events of user-registered
 * types give false.
 *
 * @example
 * ```ts
 * for (const event of await log.readStream(streamId)) if (isArborEvent(event) && event.type === "tool.ended") use(event.data.outcome);
 * ```
 */
export function isArborEvent(event: StoredEvent): event is ArborEvent {
  return Object.hasOwn(EVENT_CATALOGUE, event.type);
}

/** `event` narrowed to one of the catalogue's types: `type` and `data` of that type (per type, a union). */
export type NarrowedEvent<Envelope extends { type: string }, Type extends ArborEventType> = Type extends ArborEventType
  ? Envelope & { type: Type; data: ArborEventData<Type> }
  : never;

/**
 * True when `event` (a stored event, or a new event about to be appended) is one of `types`; narrows `type` and `data`. For stored events this is
 * sound because the log validated and upcast them; for new events, because they were built typed (`runEvent`).
 *
 * @example
 * ```ts
 * if (isEventOfType(event, "run.ended")) console.log(event.data.status);
 * ```
 */
export function isEventOfType<Envelope extends { type: string }, const Type extends ArborEventType>(
  event: Envelope,
  ...types: Type[]
): event is NarrowedEvent<Envelope, Type> {
  return (types as string[]).includes(event.type);
}

/**
 * RxJS operator: only the events of the given types, narrowed to them. Order and timing are the source's; nothing is buffered.
 *
 * @example
 * ```ts
 * harness.events$.pipe(ofType("tool.ended", "run.ended")).subscribe((event) => {
 *   if (event.type === "tool.ended") console.log(event.data.outcome); else console.log(event.data.status);
 * });
 * ```
 */
export function ofType<const Type extends ArborEventType>(...types: Type[]): OperatorFunction<StoredEvent, ArborEventOf<Type>> {
  return filter((event: StoredEvent): event is ArborEventOf<Type> => (types as string[]).includes(event.type));
}

/**
 * Keeps the events of the catalogue (drops user-registered types), typed as the union.
 *
 * @example
 * ```ts
 * log.subscribe({ streamId }).pipe(arborEvents()).subscribe((event) => event.type);
 * ```
 */
export function arborEvents(): OperatorFunction<StoredEvent, ArborEvent> {
  return filter(isArborEvent);
}

/** A typed handler of {@link ArborEventOf} for `on(type, handler)`. */
export type ArborEventHandler<Type extends ArborEventType> = (event: ArborEventOf<Type>) => void;

/**
 * True for a catalogue type name (dotted), false for anything else (e.g. a camelCase hook name).
 *
 * @example
 * ```ts
 * isArborEventType("tool.ended"); // true
 * isArborEventType("toolCall"); // false (a hook name)
 * ```
 */
export function isArborEventType(name: string): name is ArborEventType {
  return Object.hasOwn(EVENT_CATALOGUE, name);
}

/**
 * Calls `handler` with each event of `type` from `source`, typed; returns the function that stops it. A handler that throws does not stop later
 * deliveries: the error is reported as a process warning (`ArborEventHandlerWarning`). The backing of every `on(type, handler)` (source: xstate's
 * `actor.on`, ours for the error isolation).
 *
 * @example
 * ```ts
 * const stop = onEventType(session.events$(), "tool.ended", (event) => console.log(event.data.outcome));
 * ```
 */
export function onEventType<const Type extends ArborEventType>(source: Observable<StoredEvent>, type: Type, handler: ArborEventHandler<Type>): () => void {
  const subscription = source.pipe(ofType(type)).subscribe((event) => {
    try {
      handler(event);
    } catch (error) {
      process.emitWarning(`The "${type}" handler threw: ${error instanceof Error ? error.message : String(error)}`, "ArborEventHandlerWarning");
    }
  });
  return () => subscription.unsubscribe();
}

/**
 * Event families (ours): the noun before the dot of an event type ("task" for `task.queued`). A consumer that shows or records only some events
 * says which it leaves out with {@link skipsEvents}, by whole family or by type, instead of listing each type in its `switch`.
 */
import type { ArborEventType } from "./catalogue.ts";

type FamilyOf<Type> = Type extends `${infer Family}.${string}` ? Family : never;

/** The family of every catalogue event type: `"session" | "entry" | "run" | … | "budget"`. */
export type ArborEventFamily = FamilyOf<ArborEventType>;

/** The catalogue event types of the families `Family`, plus the single types `Type`. */
export type EventTypesIn<Family extends ArborEventFamily, Type extends ArborEventType = never> = Extract<ArborEventType, `${Family}.${string}`> | Type;

/**
 * A type guard that is true for the events a consumer leaves out: every event of `families` (a type added to one of those families later is left
 * out too) and each event of `types`. Used before a `switch (event.type)`, it narrows the event to the rest, so the `switch` names only what the
 * consumer handles and its `default: ignoreUnknown(event)` still fails to compile when a new type is neither handled nor left out.
 */
export function skipsEvents<const Family extends ArborEventFamily, const Type extends ArborEventType = never>(
  families: readonly Family[],
  types: readonly Type[] = [],
): <Event extends { type: string }>(event: Event) => event is Extract<Event, { type: EventTypesIn<Family, Type> }> {
  const familySet = new Set<string>(families);
  const typeSet = new Set<string>(types);
  return <Event extends { type: string }>(event: Event): event is Extract<Event, { type: EventTypesIn<Family, Type> }> =>
    typeSet.has(event.type) || familySet.has(event.type.slice(0, event.type.indexOf(".")));
}

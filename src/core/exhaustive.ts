/**
 * Exhaustive `switch` statements: the `default` branch passes the narrowed value to one of these,
 * which type-checks only when every member of the union has its `case`. A new event type, run
 * state or mode then fails to compile at each switch that must handle it.
 */

/**
 * For switches over input read from outside (a log a newer version wrote): compile-time
 * exhaustiveness, and at run time the unknown member is skipped (returns `undefined`).
 */
export function ignoreUnknown(_value: never): undefined {
  return undefined;
}

/**
 * For switches over values Arbor made itself: compile-time exhaustiveness, and a member that
 * still arrives at run time is a bug.
 *
 * @throws Error naming `what` and the value.
 */
export function assertNever(value: never, what: string): never {
  throw new Error(`Unhandled ${what}: ${JSON.stringify(value)}`);
}

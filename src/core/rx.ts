/**
 * The rxjs constructors and operators Arbor uses, each required from its own module under
 * `rxjs/internal/` (exported by rxjs's `package.json`) instead of the `rxjs` root, whose CommonJS
 * entry loads all of rxjs's 223 modules on import; these load 50. They are the same
 * classes and functions the root exports (the root re-exports these modules), so an
 * `Observable` made here is an `Observable` of `rxjs` to a caller. Types come from `rxjs` itself.
 * `from` and `of` are rxjs's scheduler-less path (`innerFrom`, which is what they call without a
 * scheduler), sparing the 13 modules of the scheduled variants.
 */
import type { Observable as ObservableType } from "rxjs";
import { innerFrom } from "rxjs/internal/observable/innerFrom";

export { BehaviorSubject } from "rxjs/internal/BehaviorSubject";
export { firstValueFrom } from "rxjs/internal/firstValueFrom";
export { Observable } from "rxjs/internal/Observable";
export { defer } from "rxjs/internal/observable/defer";
export { innerFrom as from };
export { throwError } from "rxjs/internal/observable/throwError";
export { concatMap } from "rxjs/internal/operators/concatMap";
export { filter } from "rxjs/internal/operators/filter";
export { map } from "rxjs/internal/operators/map";
export { mergeMap } from "rxjs/internal/operators/mergeMap";
export { scan } from "rxjs/internal/operators/scan";
export { skipWhile } from "rxjs/internal/operators/skipWhile";
export { take } from "rxjs/internal/operators/take";
export { takeWhile } from "rxjs/internal/operators/takeWhile";
export { toArray } from "rxjs/internal/operators/toArray";
export { ReplaySubject } from "rxjs/internal/ReplaySubject";
export { Subject } from "rxjs/internal/Subject";

/** An Observable of `values`, in order, then complete (rxjs's `of` without a scheduler). */
export function of<T>(...values: T[]): ObservableType<T> {
  return innerFrom(values);
}

/**
 * The rxjs constructors and operators Arbor uses, each required on its first call from its own module under `rxjs/internal/` (exported by rxjs's
 * `package.json`; `lazy-require.ts`), so `import("arbor-agent")` loads none of rxjs, and its first use loads 50 of rxjs's modules instead of the
 * 223 of the `rxjs` root. They are the same classes and functions the root exports (Node resolves both to rxjs's CommonJS build, and the root
 * re-exports these modules), so an `Observable` made here is an `Observable` of `rxjs` to a caller. The classes are made through factories
 * (`observable`, `subject`, `replaySubject`, `behaviorSubject`); their types come from `rxjs` itself. `from` and `of` are rxjs's scheduler-less path
 * (`innerFrom`, which is what they call without a scheduler), sparing the 13 modules of the scheduled variants.
 */
import type { BehaviorSubject, Observable, ReplaySubject, Subject, Subscriber, TeardownLogic } from "rxjs";
import { lazyRequire } from "./lazy-require.ts";

export type { BehaviorSubject, Observable, ReplaySubject, Subject } from "rxjs";

/** A function of rxjs that loads its module on the first call. */
function lazyFunction<Module, Name extends keyof Module>(path: string, name: Name): Module[Name] {
  const load = lazyRequire<Module>(`rxjs/internal/${path}`);
  return ((...args: unknown[]) => (load()[name] as (...args: unknown[]) => unknown)(...args)) as Module[Name];
}

const observableModule = lazyRequire<typeof import("rxjs/internal/Observable")>("rxjs/internal/Observable");
const subjectModule = lazyRequire<typeof import("rxjs/internal/Subject")>("rxjs/internal/Subject");
const replaySubjectModule = lazyRequire<typeof import("rxjs/internal/ReplaySubject")>("rxjs/internal/ReplaySubject");
const behaviorSubjectModule = lazyRequire<typeof import("rxjs/internal/BehaviorSubject")>("rxjs/internal/BehaviorSubject");

/** `new Observable(subscribe)` of rxjs. */
export function observable<T>(subscribe: (this: Observable<T>, subscriber: Subscriber<T>) => TeardownLogic): Observable<T> {
  const { Observable: ObservableClass } = observableModule();
  return new ObservableClass<T>(subscribe);
}

/** `new Subject()` of rxjs. */
export function subject<T>(): Subject<T> {
  const { Subject: SubjectClass } = subjectModule();
  return new SubjectClass<T>();
}

/** `new ReplaySubject()` of rxjs (an unbounded buffer). */
export function replaySubject<T>(): ReplaySubject<T> {
  const { ReplaySubject: ReplaySubjectClass } = replaySubjectModule();
  return new ReplaySubjectClass<T>();
}

/** `new BehaviorSubject(value)` of rxjs. */
export function behaviorSubject<T>(value: T): BehaviorSubject<T> {
  const { BehaviorSubject: BehaviorSubjectClass } = behaviorSubjectModule();
  return new BehaviorSubjectClass<T>(value);
}

export const firstValueFrom = lazyFunction<typeof import("rxjs/internal/firstValueFrom"), "firstValueFrom">("firstValueFrom", "firstValueFrom");
export const defer = lazyFunction<typeof import("rxjs/internal/observable/defer"), "defer">("observable/defer", "defer");
const innerFrom = lazyFunction<typeof import("rxjs/internal/observable/innerFrom"), "innerFrom">("observable/innerFrom", "innerFrom");
export { innerFrom as from };
export const throwError = lazyFunction<typeof import("rxjs/internal/observable/throwError"), "throwError">("observable/throwError", "throwError");
export const concatMap = lazyFunction<typeof import("rxjs/internal/operators/concatMap"), "concatMap">("operators/concatMap", "concatMap");
export const filter = lazyFunction<typeof import("rxjs/internal/operators/filter"), "filter">("operators/filter", "filter");
export const map = lazyFunction<typeof import("rxjs/internal/operators/map"), "map">("operators/map", "map");
export const mergeMap = lazyFunction<typeof import("rxjs/internal/operators/mergeMap"), "mergeMap">("operators/mergeMap", "mergeMap");
export const scan = lazyFunction<typeof import("rxjs/internal/operators/scan"), "scan">("operators/scan", "scan");
export const skipWhile = lazyFunction<typeof import("rxjs/internal/operators/skipWhile"), "skipWhile">("operators/skipWhile", "skipWhile");
export const take = lazyFunction<typeof import("rxjs/internal/operators/take"), "take">("operators/take", "take");
export const takeWhile = lazyFunction<typeof import("rxjs/internal/operators/takeWhile"), "takeWhile">("operators/takeWhile", "takeWhile");
export const toArray = lazyFunction<typeof import("rxjs/internal/operators/toArray"), "toArray">("operators/toArray", "toArray");

/** An Observable of `values`, in order, then complete (rxjs's `of` without a scheduler). */
export function of<T>(...values: T[]): Observable<T> {
  return innerFrom(values);
}

/**
 * The machine-readable line of a benchmark goal (issue 17): one JSON line per goal id P1–P9,
 * `{"bench","arbor","baseline","unit","ratio","goal"}`. `ratio` is stated in the goal's own
 * direction (the `goal` string says which way is better, e.g. ">= 0.8" or "<= 1.5"); `met` is
 * whether that holds on this run. A goal a run did not measure is not printed.
 */

/** One goal's figure. */
export interface GoalLine {
  /** The goal id and what was measured, e.g. "P1 append batch 1". */
  bench: string;
  arbor: number;
  baseline: number;
  unit: string;
  ratio: number;
  /** ">= x" or "<= x". */
  goal: string;
}

/** Prints `line` as one JSON line (plus `met`) and returns whether the goal is met. */
export function printGoal(line: GoalLine): boolean {
  const [, op, value] = /^(>=|<=)\s*([\d.]+)/.exec(line.goal) ?? [];
  const target = Number(value);
  const met = op === ">=" ? line.ratio >= target : op === "<=" ? line.ratio <= target : false;
  const round = (x: number) => Number(x.toPrecision(4));
  console.log(JSON.stringify({ bench: line.bench, arbor: round(line.arbor), baseline: round(line.baseline), unit: line.unit, ratio: round(line.ratio), goal: line.goal, met }));
  return met;
}

/** The median of `values` (the upper one of an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

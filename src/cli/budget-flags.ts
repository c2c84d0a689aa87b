/**
 * The CLI's budget and concurrency flags (`--budget`, `--session-budget`, `--tenant-budget` in `parseBudget` syntax, `--max-concurrent-runs`,
 * `--max-queued-runs`): a bad value is a `CliError` (exit 2) naming the flag, before anything is opened.
 */
import { parseBudget } from "../core/budget.ts";
import { InvalidArgumentError } from "../core/errors.ts";
import type { HarnessBudget } from "../harness/budget-options.ts";
import { CliError } from "./cli-error.ts";

/** The budget flags as commander gives them. */
export interface BudgetFlags {
  budget?: string;
  sessionBudget?: string;
  tenantBudget?: string;
}

function parsed(text: string | undefined, flag: string) {
  if (text === undefined) return undefined;
  try {
    return parseBudget(text, flag);
  } catch (error) {
    if (InvalidArgumentError.isInstance(error)) throw new CliError(error.message);
    throw error;
  }
}

/** The harness budget of the flags, or undefined when none is given. */
export function budgetFlags(flags: BudgetFlags): HarnessBudget | undefined {
  const run = parsed(flags.budget, "--budget");
  const session = parsed(flags.sessionBudget, "--session-budget");
  const tenant = parsed(flags.tenantBudget, "--tenant-budget");
  if (!run && !session && !tenant) return undefined;
  return { ...(run ? { run } : {}), ...(session ? { session } : {}), ...(tenant ? { tenant } : {}) };
}

/** A whole-number flag ≥ `min`, or undefined when absent. */
export function wholeFlag(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (Number.isInteger(number) && !Number.isSafeInteger(number)) throw new CliError(`${flag}: "${value}" is above the largest supported value, ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER).`);
  if (!Number.isSafeInteger(number) || number < min) throw new CliError(`${flag}: "${value}" must be a whole number ≥ ${min}.`);
  return number;
}

/**
 * Budgets (`docs/budgets.md`): up to five optional limits, `maxCostUsd`, `maxTokens`, `maxToolCalls`, `maxTurns`, `maxDurationMs`. {@link parseBudget}
 * reads the CLI syntax (`cost=0.50,tokens=20000,duration=10m`) and {@link checkBudget} validates, both throwing `InvalidArgumentError`;
 * {@link estimateTokens} (`ceil(chars / 4)`, images 1200) stands in for unknown usage, marked `estimated`.
 */
import { InvalidArgumentError } from "./errors.ts";

/** Limits of a run, a session or a tenant. Every field is optional; absent = no limit. */
export interface Budget {
  /** US dollars of model calls (priced with the model's prices, or the provider's reported cost). */
  maxCostUsd?: number;
  /** Tokens of model calls (input, output, cache read and write). */
  maxTokens?: number;
  /** Tool calls that were executed. */
  maxToolCalls?: number;
  /** Model turns (a retried model call is the same turn). */
  maxTurns?: number;
  /** Wall time in ms (a run: since it started; a session or tenant: the sum of its runs' times). */
  maxDurationMs?: number;
}

/** The name of one limit of a {@link Budget}. */
export type BudgetLimit = keyof Budget;

/** The scope a budget applies to. */
export type BudgetScope = "run" | "session" | "tenant";

/** Budgets per scope: each run, each session (all its runs), each tenant (all its sessions). */
export interface BudgetPolicy {
  run?: Budget;
  session?: Budget;
  tenant?: Budget;
}

/** Why a call was refused: the limit, its scope, and what the ledger held (in the limit's unit: dollars, tokens, calls, turns or ms). */
export interface BudgetExceeded {
  scope: BudgetScope;
  limit: BudgetLimit;
  /** The limit's value. */
  max: number;
  /** Settled use in the scope. */
  used: number;
  /** Use reserved by calls in flight (not yet settled) in the scope. */
  reserved: number;
  /** What the refused call asked for (0 for a duration limit). */
  requested: number;
}

const KEYS: Record<string, BudgetLimit> = {
  cost: "maxCostUsd",
  tokens: "maxTokens",
  "tool-calls": "maxToolCalls",
  turns: "maxTurns",
  duration: "maxDurationMs",
};

const LIMITS: readonly BudgetLimit[] = ["maxCostUsd", "maxTokens", "maxToolCalls", "maxTurns", "maxDurationMs"];
const WHOLE: ReadonlySet<BudgetLimit> = new Set(["maxTokens", "maxToolCalls", "maxTurns", "maxDurationMs"]);
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses the CLI budget syntax: comma-separated `key=value` pairs, keys `cost` (dollars),
 * `tokens`, `tool-calls`, `turns`, `duration` (`500ms`, `30s`, `10m`, `1h`; a bare number is ms).
 * @throws InvalidArgumentError naming the pair that is wrong (unknown key, repeated key, bad value).
 * @example
 * parseBudget("tokens=20000,tool-calls=50"); // { maxTokens: 20000, maxToolCalls: 50 }
 */
export function parseBudget(text: string, what = "--budget"): Budget {
  const budget: Budget = {};
  const pairs = text.split(",").map((pair) => pair.trim()).filter((pair) => pair !== "");
  if (pairs.length === 0) throw new InvalidArgumentError(`${what}: empty; give key=value pairs such as cost=0.50,tokens=20000,tool-calls=50,turns=10,duration=10m.`);
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    const key = at < 0 ? pair : pair.slice(0, at).trim();
    const raw = at < 0 ? "" : pair.slice(at + 1).trim();
    const limit = Object.hasOwn(KEYS, key) ? KEYS[key] : undefined;
    if (!limit) throw new InvalidArgumentError(`${what}: unknown key "${key}" in "${pair}"; keys are ${Object.keys(KEYS).join(", ")}.`);
    if (budget[limit] !== undefined) throw new InvalidArgumentError(`${what}: "${key}" is given twice.`);
    if (raw === "") throw new InvalidArgumentError(`${what}: "${key}" has no value (write ${key}=<value>).`);
    let value: number;
    if (limit === "maxDurationMs") {
      const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw);
      if (!match) throw new InvalidArgumentError(`${what}: duration "${raw}" is not a duration; write e.g. 500ms, 30s, 10m or 1h.`);
      value = Math.round(Number(match[1]) * UNITS[match[2] ?? "ms"]);
    } else {
      value = /^\d+(?:\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
    }
    budget[limit] = value;
    checkLimit(limit, value, `${what}: ${key}="${raw}"`);
  }
  return budget;
}

function checkLimit(limit: BudgetLimit, value: unknown, label: string): void {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new InvalidArgumentError(`${label} must be a finite number ≥ 0.`);
  if (WHOLE.has(limit) && !Number.isInteger(value)) throw new InvalidArgumentError(`${label} must be a whole number.`);
  if (WHOLE.has(limit) && !Number.isSafeInteger(value)) throw new InvalidArgumentError(`${label} is above the largest supported value, ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER).`);
}

/**
 * Validates a budget object (unknown keys and bad values are refused) and returns it.
 * @throws InvalidArgumentError naming the field.
 * @example
 * checkBudget({ maxTurns: 3 }, "budget.run");
 */
export function checkBudget(budget: unknown, what: string): Budget {
  if (budget === undefined) return {};
  if (budget === null || typeof budget !== "object" || Array.isArray(budget)) throw new InvalidArgumentError(`${what} must be an object of limits (${LIMITS.join(", ")}).`);
  for (const [key, value] of Object.entries(budget)) {
    if (!(LIMITS as readonly string[]).includes(key)) throw new InvalidArgumentError(`${what}: unknown limit "${key}"; limits are ${LIMITS.join(", ")}.`);
    if (value !== undefined) checkLimit(key as BudgetLimit, value, `${what}.${key}`);
  }
  return budget as Budget;
}

/** True when the budget sets at least one limit. */
export function hasLimits(budget: Budget | undefined): boolean {
  return budget !== undefined && LIMITS.some((limit) => budget[limit] !== undefined);
}

/** The stricter of two budgets, limit by limit (the smaller value where both set one). */
export function stricterBudget(a: Budget | undefined, b: Budget | undefined): Budget {
  const out: Budget = {};
  for (const limit of LIMITS) {
    const x = a?.[limit];
    const y = b?.[limit];
    const value = x === undefined ? y : y === undefined ? x : Math.min(x, y);
    if (value !== undefined) out[limit] = value;
  }
  return out;
}

/**
 * Every limit name, in a fixed order.
 * @example
 * for (const limit of BUDGET_LIMITS) console.log(limit, budget[limit] ?? "no limit");
 */
export const BUDGET_LIMITS = LIMITS;

/** Tokens an image counts for in {@link estimateTokens} (a mid-size image on OpenAI and Anthropic). */
export const IMAGE_TOKEN_ESTIMATE = 1200;

/**
 * The token estimate of text whose usage is unknown: `ceil(characters / 4)` (the common rule of thumb for English and code with BPE tokenizers; it
 * over-counts CJK less than it under-counts it, so budgets with such text should leave margin).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The unit each limit counts in (one, several), as the refusal's sentence writes it after the limit's value (dollars are written `$`). */
const LIMIT_UNITS: Record<BudgetLimit, readonly [string, string]> = {
  maxCostUsd: ["", ""],
  maxTokens: [" token", " tokens"],
  maxToolCalls: [" tool call", " tool calls"],
  maxTurns: [" turn", " turns"],
  maxDurationMs: [" ms", " ms"],
};

/**
 * The sentence a run's end and the HTTP error chunk carry for a refusal: the limit with its unit, then what the scope used, what calls in flight
 * reserved and what the refused call asked for, e.g. `Budget exceeded: the run's maxToolCalls is 3 tool calls (used 3, reserved 0, requested 1).`
 * A wall-time limit names only the time used (nothing is reserved or asked for).
 * @example
 * budgetExceededMessage({ scope: "run", limit: "maxTurns", max: 2, used: 2, reserved: 0, requested: 1 });
 */
export function budgetExceededMessage(exceeded: BudgetExceeded): string {
  const owner = exceeded.scope === "run" ? "the run's" : exceeded.scope === "session" ? "the session's" : "the tenant's";
  const amount = (value: number) => (exceeded.limit === "maxCostUsd" ? `$${value.toFixed(4)}` : String(Math.round(value)));
  const head = `Budget exceeded: ${owner} ${exceeded.limit} is ${amount(exceeded.max)}${LIMIT_UNITS[exceeded.limit][exceeded.max === 1 ? 0 : 1]}`;
  if (exceeded.limit === "maxDurationMs") return `${head} (used ${amount(exceeded.used)}).`;
  return `${head} (used ${amount(exceeded.used)}, reserved ${amount(exceeded.reserved)}, requested ${amount(exceeded.requested)}).`;
}

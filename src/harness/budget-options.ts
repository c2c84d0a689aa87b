/**
 * The harness's `budget` option (`docs/budgets.md`): limits per run, per session (all its runs, every process) and per tenant, plus a prompt's own
 * (the stricter holds), its validation (naming the bad field) and the gate each session gives its agent. Budgets need a log.
 */
import { checkBudget, type Budget, type BudgetPolicy } from "../core/budget.ts";
import { InvalidArgumentError } from "../core/errors.ts";
import { createBudgetGate, type BudgetGate } from "../machines/run-budget.ts";
import type { AgentOptions } from "../machines/agent-types.ts";
import type { EventLog } from "../store/event-log.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { DEFAULT_TENANT } from "../store/session-repository.ts";

/** The harness's `budget` option: limits per run, per session and per tenant. */
export interface HarnessBudget {
  run?: Budget;
  session?: Budget;
  /** Limits of the session's tenant, or a function of the tenant (undefined: none). */
  tenant?: Budget | ((tenant: string) => Budget | undefined);
}

/**
 * Validates a `budget` option (harness or prompt).
 * @throws InvalidArgumentError naming the field.
 * @example
 * checkHarnessBudget({ run: { maxTurns: 3 } }, "budget");
 */
export function checkHarnessBudget(budget: unknown, what: string): void {
  if (budget === undefined) return;
  if (budget === null || typeof budget !== "object" || Array.isArray(budget)) throw new InvalidArgumentError(`${what} must be an object { run?, session?, tenant? }.`);
  for (const [key, value] of Object.entries(budget)) {
    if (key !== "run" && key !== "session" && key !== "tenant") throw new InvalidArgumentError(`${what}: unknown scope "${key}"; scopes are run, session, tenant.`);
    if (key === "tenant" && typeof value === "function") continue;
    checkBudget(value, `${what}.${key}`);
  }
}

/** The budget hook of one harness session: the agent's gate and the per-prompt limits. */
export interface SessionBudget {
  /** For `AgentOptions.budget`. */
  attach: NonNullable<AgentOptions["budget"]>;
  /** The limits of the next run this session starts (a prompt's or continue's `budget`). */
  nextRun(policy: HarnessBudget | undefined): void;
}

/** The session's budget hook, or undefined without a log. */
export function sessionBudget(budget: HarnessBudget | undefined, log: EventLog | undefined, session: SessionHandle): SessionBudget | undefined {
  if (!log) return undefined;
  const tenant = session.view.info.tenant ?? DEFAULT_TENANT;
  const resolve = (policy: HarnessBudget | undefined): BudgetPolicy => ({
    ...(policy?.run ? { run: policy.run } : {}),
    ...(policy?.session ? { session: policy.session } : {}),
    ...(policy?.tenant ? { tenant: typeof policy.tenant === "function" ? checkBudget(policy.tenant(tenant), `budget.tenant("${tenant}")`) : policy.tenant } : {}),
  });
  let gate: BudgetGate | undefined;
  let pending: BudgetPolicy | undefined;
  return {
    attach: (hooks) => {
      gate = createBudgetGate({ ...hooks, log, tenant, sessionId: session.id, policy: () => resolve(budget) });
      if (pending) gate.nextRun(pending);
      return gate;
    },
    nextRun(policy) {
      pending = policy ? resolve(policy) : undefined;
      gate?.nextRun(pending);
    },
  };
}

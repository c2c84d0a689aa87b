/**
 * A run's own policy (`docs/durability.md`): the tools whose calls need a human decision (`requireApproval`) and the run's budget limits. It is
 * recorded in the run's `run.started`, so a process that continues the run after a crash applies it combined with its own: the stricter wins (the
 * union of the gated tools, the smaller of each limit). Holds no secret: tool names and numbers only.
 */
import { hasLimits, stricterBudget, type Budget } from "./budget.ts";

/** The policy a run was started with (see the module contract). */
export interface RunPolicy {
  /** Tool names whose calls wait for approval, or `all`. */
  requireApproval?: readonly string[] | "all";
  /** The run's limits (scope `run`). */
  budget?: Budget;
}

/** The approval policy of `a` and `b` together: `all` if either says so, else the union of the names (undefined when neither names one). */
function unionApproval(a: RunPolicy["requireApproval"], b: RunPolicy["requireApproval"]): RunPolicy["requireApproval"] {
  if (a === "all" || b === "all") return "all";
  const names = [...new Set([...(a ?? []), ...(b ?? [])])];
  return names.length ? names : undefined;
}

/**
 * The stricter of two run policies: the union of the gated tools, the smaller of each budget limit. Empty parts are left out, so the answer is
 * `{}` when neither policy sets anything (`{ requireApproval: ["bash"] }` with `{ requireApproval: ["write"] }` gates both).
 */
export function combineRunPolicies(a: RunPolicy | undefined, b: RunPolicy | undefined): RunPolicy {
  const requireApproval = unionApproval(a?.requireApproval, b?.requireApproval);
  const budget = stricterBudget(a?.budget, b?.budget);
  return { ...(requireApproval ? { requireApproval } : {}), ...(hasLimits(budget) ? { budget } : {}) };
}

/** True when `policy` gates the calls of tool `name`. */
export function policyGates(policy: RunPolicy | undefined, name: string): boolean {
  const gated = policy?.requireApproval;
  return gated === "all" || (gated?.includes(name) ?? false);
}

/** True when the policy sets nothing (nothing to record). */
export function isEmptyPolicy(policy: RunPolicy | undefined): boolean {
  return policy?.requireApproval === undefined && !hasLimits(policy?.budget);
}

/** The policy as `run.started` records it (plain JSON: a copy of the names), or undefined when it sets nothing. */
export function policyRecord(policy: RunPolicy | undefined): { requireApproval?: string[] | "all"; budget?: Budget } | undefined {
  if (!policy || isEmptyPolicy(policy)) return undefined;
  const gated = policy.requireApproval;
  return { ...(gated !== undefined ? { requireApproval: gated === "all" ? "all" : [...gated] } : {}), ...(hasLimits(policy.budget) ? { budget: { ...policy.budget } } : {}) };
}

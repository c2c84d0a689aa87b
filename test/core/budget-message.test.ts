/**
 * The sentence of a budget refusal names the limit with its unit, what the scope used, what calls in flight reserved, and what the refused call
 * asked for (a wall-time limit: the time used).
 */
import { describe, expect, it } from "vitest";
import { budgetExceededMessage } from "../../src/core/budget.ts";

describe("budgetExceededMessage", () => {
  it("names the used, reserved and requested amounts, in the limit's unit", () => {
    expect(budgetExceededMessage({ scope: "tenant", limit: "maxTokens", max: 1000, used: 0, reserved: 0, requested: 1500 })).toBe(
      "Budget exceeded: the tenant's maxTokens is 1000 tokens (used 0, reserved 0, requested 1500).",
    );
    expect(budgetExceededMessage({ scope: "run", limit: "maxToolCalls", max: 1, used: 0, reserved: 1, requested: 1 })).toBe(
      "Budget exceeded: the run's maxToolCalls is 1 tool call (used 0, reserved 1, requested 1).",
    );
    expect(budgetExceededMessage({ scope: "session", limit: "maxTurns", max: 3, used: 3, reserved: 0, requested: 1 })).toBe(
      "Budget exceeded: the session's maxTurns is 3 turns (used 3, reserved 0, requested 1).",
    );
    expect(budgetExceededMessage({ scope: "run", limit: "maxCostUsd", max: 0.5, used: 0.25, reserved: 0.125, requested: 0.2 })).toBe(
      "Budget exceeded: the run's maxCostUsd is $0.5000 (used $0.2500, reserved $0.1250, requested $0.2000).",
    );
    expect(budgetExceededMessage({ scope: "run", limit: "maxDurationMs", max: 60000, used: 61250, reserved: 0, requested: 0 })).toBe(
      "Budget exceeded: the run's maxDurationMs is 60000 ms (used 61250).",
    );
  });
});

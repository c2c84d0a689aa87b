/**
 * The budget gate of a session's runs (`docs/budgets.md`): every model and tool call is checked against the tenant's ledger before it starts
 * (run, session and tenant limits, the stricter wins), reserves its estimate and settles what it used. A refusal calls `onExceeded` and the call
 * does not start; `maxDurationMs` is also enforced by a timer while a call is in flight; unreported usage is estimated (`estimated: true`); a cost
 * limit on an unpriced model fails the run (`BUDGET_UNPRICED`). Without limits a call costs nothing here.
 */
import { uuidv7 } from "../core/uuid-v7.ts";
import { BUDGET_LIMITS, estimateTokens, hasLimits, IMAGE_TOKEN_ESTIMATE, stricterBudget, type Budget, type BudgetExceeded, type BudgetPolicy, type BudgetScope } from "../core/budget.ts";
import type { AgentMessage, AssistantMessage } from "../core/messages.ts";
import type { ModelClient, ModelRequest } from "../core/model-stream.ts";
import { budgetLedgerOf, type BudgetAmounts, type LedgerFold, type ScopeUse } from "../store/budget-ledger.ts";
import type { EventLog } from "../store/event-log.ts";
import { ignoreError } from "../core/ignored.ts";

/** Output tokens reserved for a model call when neither the request nor the model caps them. */
export const DEFAULT_OUTPUT_ALLOWANCE = 4096;

/** A call the gate admitted: settle it once it ended. */
export interface AdmittedCall<Result> {
  settle(result: Result): Promise<void>;
}

/** The gate (see the module contract). `undefined` from a `before*` call: no budget applies. */
export interface BudgetGate {
  /** Binds per-prompt limits to the next run this gate sees. */
  nextRun(policy: BudgetPolicy | undefined): void;
  /** The run limits the next run would have here (the harness's `run` with the next run's own), for its recorded policy. */
  nextRunBudget(): Budget | undefined;
  /**
   * Binds run `runId` now, with `run` as its run limits (the next run's own combined with a recorded policy's, for a continued run): they hold
   * even when this process has no budget of its own.
   */
  bindRun(runId: string, run: Budget | undefined): void;
  beforeModelCall(call: { runId: string; turnId: string; request: ModelRequest; model: ModelClient }): Promise<AdmittedCall<AssistantMessage | undefined> | "refused" | undefined>;
  beforeToolCall(call: { toolCallId: string; toolName: string }): Promise<AdmittedCall<void> | "refused" | undefined>;
}

/** What the agent gives its gate: the run it runs now and where refusals go. */
export interface BudgetGateHooks {
  /** The run the agent is running now (tool calls do not carry it). */
  currentRunId: () => string | undefined;
  /** A call was refused: the run must end `budget_exceeded`. */
  onExceeded: (exceeded: BudgetExceeded, call: "model" | "tool" | "deadline") => void;
  /** A limit cannot be checked (a cost limit on a model without prices): the run must fail. */
  onFailed: (message: string, code: string) => void;
}

/** Options of {@link createBudgetGate}. */
export interface BudgetGateOptions extends BudgetGateHooks {
  log: EventLog;
  tenant: string;
  sessionId: string;
  /** The harness's limits (read per run). */
  policy: () => BudgetPolicy;
}

/** The estimated input tokens of a request: characters / 4 of its text, 1 200 per image. */
export function estimateRequestTokens(request: ModelRequest): number {
  let tokens = estimateTokens(request.systemPrompt ?? "");
  if (request.tools.length) tokens += estimateTokens(JSON.stringify(request.tools));
  for (const message of request.messages) tokens += estimateMessageTokens(message);
  return tokens;
}

/** The estimated tokens of one message (text, thinking, tool-call arguments; 1 200 per image). */
export function estimateMessageTokens(message: AgentMessage): number {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return estimateTokens(content);
  if (!Array.isArray(content)) return estimateTokens(JSON.stringify(message));
  let tokens = 0;
  for (const block of content as { type: string; text?: string; thinking?: string; arguments?: unknown }[]) {
    if (block.type === "image") tokens += IMAGE_TOKEN_ESTIMATE;
    else if (block.type === "text") tokens += estimateTokens(block.text ?? "");
    else if (block.type === "thinking") tokens += estimateTokens(block.thinking ?? "");
    else if (block.type === "toolCall") tokens += estimateTokens(JSON.stringify(block.arguments ?? {}));
  }
  return tokens;
}

const finite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/** What a finished (or stopped) model call used; `estimated` when the provider reported no count. */
export function modelCallUse(message: AssistantMessage | undefined, inputEstimate: number, model: ModelClient): BudgetAmounts & { estimated: boolean } {
  const usage = message?.usage;
  const counts = usage ? [usage.input, usage.output, usage.cacheRead, usage.cacheWrite].filter(finite) : [];
  const reported = usage && finite(usage.totalTokens) ? usage.totalTokens : counts.length ? counts.reduce((a, b) => a + b, 0) : undefined;
  const outputEstimate = message ? estimateMessageTokens(message) : 0;
  const tokens = reported ?? inputEstimate + outputEstimate;
  const estimated = reported === undefined;
  let costUsd = 0;
  if (usage?.cost && finite(usage.cost.total) && !estimated) costUsd = usage.cost.total;
  else if (model.cost) {
    const input = estimated ? inputEstimate : (usage?.input ?? 0) + (usage?.cacheRead ?? 0) + (usage?.cacheWrite ?? 0);
    const output = estimated ? outputEstimate : (usage?.output ?? 0);
    costUsd = (input * model.cost.input + output * model.cost.output) / 1_000_000;
  }
  return { tokens, costUsd, toolCalls: 0, turns: 0, estimated };
}

interface RunLimits {
  scopes: { scope: BudgetScope; budget: Budget; use: (fold: LedgerFold) => ScopeUse; extraMs: (fold: LedgerFold, now: number) => number }[];
  runBudget: Budget;
}

/** Creates the gate of one session (see the module contract). */
export function createBudgetGate(options: BudgetGateOptions): BudgetGate {
  const ledger = budgetLedgerOf(options.log, options.tenant);
  const { sessionId } = options;
  let pending: BudgetPolicy | undefined;
  const perRun = new Map<string, BudgetPolicy>();
  const turnsSeen = new Set<string>();

  const policyOf = (runId: string): BudgetPolicy => {
    let own = perRun.get(runId);
    if (!own) {
      own = pending ?? {};
      pending = undefined;
      perRun.clear();
      perRun.set(runId, own);
    }
    const base = options.policy();
    return { run: stricterBudget(base.run, own.run), session: stricterBudget(base.session, own.session), tenant: stricterBudget(base.tenant, own.tenant) };
  };

  const limitsOf = (runId: string, policy: BudgetPolicy, fold: LedgerFold | undefined): RunLimits => {
    const runBudget = stricterBudget(policy.run, fold?.runBudget(runId));
    const runExtra = (f: LedgerFold, now: number) => f.runElapsedMs(runId, now) - f.run(runId).durationMs;
    return {
      runBudget: policy.run ?? {},
      scopes: [
        { scope: "run", budget: runBudget, use: (f) => f.run(runId), extraMs: runExtra },
        { scope: "session", budget: policy.session ?? {}, use: (f) => f.session(sessionId), extraMs: runExtra },
        { scope: "tenant", budget: policy.tenant ?? {}, use: (f) => f.tenant, extraMs: runExtra },
      ],
    };
  };

  /** The first limit the call would break, in scope order run, session, tenant. */
  const refusalOf = (limits: RunLimits, fold: LedgerFold, asked: BudgetAmounts, kind: "model" | "tool"): BudgetExceeded | undefined => {
    const now = Date.now();
    for (const { scope, budget, use, extraMs } of limits.scopes) {
      if (!hasLimits(budget)) continue;
      const { used, reserved, durationMs } = use(fold);
      for (const limit of BUDGET_LIMITS) {
        const max = budget[limit];
        if (max === undefined) continue;
        if (limit === "maxDurationMs") {
          const spent = durationMs + extraMs(fold, now);
          if (spent >= max) return { scope, limit, max, used: spent, reserved: 0, requested: 0 };
          continue;
        }
        const field = limit === "maxCostUsd" ? "costUsd" : limit === "maxTokens" ? "tokens" : limit === "maxToolCalls" ? "toolCalls" : "turns";
        const sum = used[field] + reserved[field];
        const requested = asked[field];
        // Counts never go over; tokens and dollars: no room left, or not even the call's input fits.
        const over = field === "toolCalls" || field === "turns" ? requested > 0 && sum + requested > max : sum >= max || sum + requested > max;
        // A tool call is refused once tokens or dollars are used up (no model call could follow it).
        if (over && (kind === "model" || field === "toolCalls" || sum >= max)) return { scope, limit, max, used: used[field], reserved: reserved[field], requested };
      }
    }
    return undefined;
  };

  // The wall-time limit also stops a run between checks (a long tool call, a slow model): a timer set at each admission for the earliest moment a
  // maxDurationMs runs out; it refuses only the run it was set for, while that run is still the agent's current one.
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const armDeadline = (runId: string, policy: BudgetPolicy) => {
    const timed = [policy.run, policy.session, policy.tenant].some((budget) => budget?.maxDurationMs !== undefined);
    if (!timed) return;
    void ledger.read().then((fold) => {
      const limits = limitsOf(runId, policy, fold);
      const now = Date.now();
      let remaining = Number.POSITIVE_INFINITY;
      for (const { budget, use, extraMs } of limits.scopes) {
        if (budget.maxDurationMs !== undefined) remaining = Math.min(remaining, budget.maxDurationMs - (use(fold).durationMs + extraMs(fold, now)));
      }
      if (!Number.isFinite(remaining)) return;
      if (deadline) clearTimeout(deadline);
      deadline = setTimeout(() => {
        deadline = undefined;
        if (options.currentRunId() !== runId) return;
        void ledger.read().then((later) => {
          const over = refusalOf(limitsOf(runId, policy, later), later, { tokens: 0, costUsd: 0, toolCalls: 0, turns: 0 }, "model");
          if (over?.limit === "maxDurationMs" && options.currentRunId() === runId) options.onExceeded(over, "deadline");
        }, ignoreError("a failed ledger read at the deadline refuses nothing; the next admission reads the ledger again"));
      }, Math.max(0, remaining) + 1);
      deadline.unref?.();
    }, ignoreError("a failed ledger read arms no deadline; the next admission reads the ledger again"));
  };

  const active = (policy: BudgetPolicy) => hasLimits(policy.run) || hasLimits(policy.session) || hasLimits(policy.tenant);

  return {
    nextRun(policy) {
      pending = policy;
    },
    nextRunBudget() {
      const run = stricterBudget(options.policy().run, pending?.run);
      return hasLimits(run) ? run : undefined;
    },
    bindRun(runId, run) {
      const own: BudgetPolicy = { ...pending, ...(run ? { run } : {}) };
      pending = undefined;
      perRun.clear();
      perRun.set(runId, own);
    },
    async beforeModelCall({ runId, turnId, request, model }) {
      const policy = policyOf(runId);
      if (!active(policy)) return undefined;
      const limits = limitsOf(runId, policy, await ledger.read());
      if (limits.scopes.some((scope) => scope.budget.maxCostUsd !== undefined) && !model.cost) {
        options.onFailed(`A budget limits cost (maxCostUsd), but model ${model.provider}/${model.modelId} has no prices; give its cost in the model registry (or drop maxCostUsd).`, "BUDGET_UNPRICED");
        return "refused";
      }
      const input = estimateRequestTokens(request);
      const allowance = request.maxTokens ?? model.maxTokens ?? DEFAULT_OUTPUT_ALLOWANCE;
      const price = (tokensIn: number, tokensOut: number) => (model.cost ? (tokensIn * model.cost.input + tokensOut * model.cost.output) / 1_000_000 : 0);
      const turnKey = `${runId}:${turnId}`;
      const turns = turnsSeen.has(turnKey) ? 0 : 1;
      const asked: BudgetAmounts = { tokens: input, costUsd: price(input, 0), toolCalls: 0, turns };
      const reservationId = uuidv7();
      const reservation = { reservationId, sessionId, runId, kind: "model" as const, tokens: input + allowance, costUsd: price(input, allowance), toolCalls: 0, turns, ...(hasLimits(limits.runBudget) ? { runBudget: limits.runBudget } : {}) };
      const decided = await ledger.reserve(reservation, (fold) => refusalOf(limitsOf(runId, policy, fold), fold, asked, "model"));
      if (!decided.ok) {
        options.onExceeded(decided.refusal, "model");
        return "refused";
      }
      turnsSeen.add(turnKey);
      armDeadline(runId, policy);
      let settled = false;
      return {
        settle: async (message) => {
          if (settled) return;
          settled = true;
          const use = modelCallUse(message, input, model);
          await ledger.settle({ reservationId, sessionId, runId, costUsd: use.costUsd, tokens: use.tokens, toolCalls: 0, turns, estimated: use.estimated });
        },
      };
    },
    async beforeToolCall() {
      const runId = options.currentRunId();
      if (runId === undefined) return undefined;
      const policy = policyOf(runId);
      if (!active(policy)) return undefined;
      const asked: BudgetAmounts = { tokens: 0, costUsd: 0, toolCalls: 1, turns: 0 };
      const reservationId = uuidv7();
      const limits = limitsOf(runId, policy, undefined);
      const reservation = { reservationId, sessionId, runId, kind: "tool" as const, ...asked, ...(hasLimits(limits.runBudget) ? { runBudget: limits.runBudget } : {}) };
      const decided = await ledger.reserve(reservation, (fold) => refusalOf(limitsOf(runId, policy, fold), fold, asked, "tool"));
      if (!decided.ok) {
        options.onExceeded(decided.refusal, "tool");
        return "refused";
      }
      armDeadline(runId, policy);
      let settled = false;
      return {
        settle: async () => {
          if (settled) return;
          settled = true;
          await ledger.settle({ reservationId, sessionId, runId, ...asked, estimated: false });
        },
      };
    },
  };

}

/**
 * The budget ledger of a tenant (ours, `docs/budgets.md`): reservations and settlements of model and tool calls in the stream `budget-<tenant>`,
 * folded into what each run, session and the tenant used and reserved.
 * - {@link BudgetLedger.reserve} decides on a fold caught up with the stream and appends `budget.reserved` with its version as the expected version:
 *   a process that appended first makes it conflict, catch up and decide again, so two processes never both take the last room of a limit;
 * - calls on one ledger are serialised in a process ({@link budgetLedgerOf}); {@link BudgetLedger.settle} appends `budget.settled`, after which the
 *   settled amounts count; a reservation never settled keeps counting;
 * - a run's wall time runs from its first ledger event to its latest; a session's and the tenant's are the sums of their runs';
 * - `budget.reset` (a session's delete) starts the session's use again from zero, so a new session with the id does not inherit it; what the
 *   deleted session used still counts for the tenant, and its calls still in flight settle into the tenant's use and their runs' only.
 */
import { ExpectedVersionConflictError } from "../core/errors.ts";
import type { Budget } from "../core/budget.ts";
import type { EventLog, StoredEvent } from "./event-log.ts";
import { isEventOfType } from "./events/catalogue.ts";
import { ignoreError } from "../core/ignored.ts";

/** Amounts a call uses: dollars, tokens, tool calls, turns. */
export interface BudgetAmounts {
  costUsd: number;
  tokens: number;
  toolCalls: number;
  turns: number;
}

/** Use in one scope: settled (`used`) and in flight (`reserved`), plus wall time in ms. */
export interface ScopeUse {
  used: BudgetAmounts;
  reserved: BudgetAmounts;
  /** Wall time so far (ms): a run's span of ledger events, a session's or tenant's sum of them. */
  durationMs: number;
}

/** A reservation to append. */
export interface BudgetReservation extends BudgetAmounts {
  reservationId: string;
  sessionId: string;
  runId: string;
  kind: "model" | "tool";
  runBudget?: Budget;
}

/** A settlement to append. */
export interface BudgetSettlement extends BudgetAmounts {
  reservationId: string;
  sessionId: string;
  runId: string;
  estimated: boolean;
}

/** The folded ledger, read-only for checks. */
export interface LedgerFold {
  tenant: ScopeUse;
  session(sessionId: string): ScopeUse;
  run(runId: string): ScopeUse;
  /** The run's own limits as its first reservation recorded them. */
  runBudget(runId: string): Budget | undefined;
  /** ms since the run's first ledger event (0 for a run with none). */
  runElapsedMs(runId: string, now: number): number;
}

/** The ledger of one tenant. */
export interface BudgetLedger {
  readonly streamId: string;
  /** Decides and appends a reservation; `check` returns a refusal, or undefined to reserve. */
  reserve<R>(reservation: BudgetReservation, check: (fold: LedgerFold) => R | undefined): Promise<{ ok: true } | { ok: false; refusal: R }>;
  settle(settlement: BudgetSettlement): Promise<void>;
  /** The fold caught up with the log. */
  read(): Promise<LedgerFold>;
}

const zero = (): BudgetAmounts => ({ costUsd: 0, tokens: 0, toolCalls: 0, turns: 0 });
const emptyUse = (): ScopeUse => ({ used: zero(), reserved: zero(), durationMs: 0 });
const add = (into: BudgetAmounts, amounts: BudgetAmounts, sign: 1 | -1) => {
  into.costUsd += sign * amounts.costUsd;
  into.tokens += sign * amounts.tokens;
  into.toolCalls += sign * amounts.toolCalls;
  into.turns += sign * amounts.turns;
};
const amountsOf = (data: BudgetAmounts): BudgetAmounts => ({ costUsd: data.costUsd, tokens: data.tokens, toolCalls: data.toolCalls, turns: data.turns });

interface RunFold extends ScopeUse {
  sessionId: string;
  /** The session's resets before this run: a run of a reset session no longer counts for it. */
  epoch: number;
  firstAt: number;
  lastAt: number;
  budget?: Budget;
}

/**
 * The stream of a tenant's ledger.
 *
 * @example
 * ```ts
 * await log.readStream(budgetStreamId("acme")); // budget.reserved / budget.settled events
 * ```
 */
export function budgetStreamId(tenant: string): string {
  return `budget-${encodeURIComponent(tenant)}`;
}

const MAX_ATTEMPTS = 50;

function createLedger(log: EventLog, tenant: string): BudgetLedger {
  const streamId = budgetStreamId(tenant);
  let version = 0;
  const tenantUse = emptyUse();
  const sessions = new Map<string, ScopeUse>();
  const runs = new Map<string, RunFold>();
  const open = new Map<string, { sessionId: string; runId: string; amounts: BudgetAmounts }>();
  /** Resets (`budget.reset`) per session so far. */
  const epochs = new Map<string, number>();
  const epochOf = (sessionId: string) => epochs.get(sessionId) ?? 0;
  let chain: Promise<unknown> = Promise.resolve();

  const sessionOf = (id: string) => {
    let use = sessions.get(id);
    if (!use) sessions.set(id, (use = emptyUse()));
    return use;
  };
  const touch = (runId: string, sessionId: string, at: number): RunFold => {
    let run = runs.get(runId);
    if (!run) {
      run = { ...emptyUse(), sessionId, epoch: epochOf(sessionId), firstAt: at, lastAt: at };
      runs.set(runId, run);
      return run;
    }
    const delta = Math.max(0, at - run.lastAt);
    if (delta > 0) {
      run.lastAt = at;
      run.durationMs += delta;
      if (run.epoch === epochOf(run.sessionId)) sessionOf(run.sessionId).durationMs += delta;
      tenantUse.durationMs += delta;
    }
    return run;
  };
  /** The scopes a run's calls count in: the tenant, its session (unless the session was reset since the run began), the run. */
  const scopes = (run: RunFold): ScopeUse[] => (run.epoch === epochOf(run.sessionId) ? [tenantUse, sessionOf(run.sessionId), run] : [tenantUse, run]);
  const apply = (event: StoredEvent) => {
    version = event.version;
    const at = Date.parse(event.time);
    if (isEventOfType(event, "budget.reserved")) {
      const { data } = event;
      const amounts = amountsOf(data);
      const run = touch(data.runId, data.sessionId, at);
      if (data.runBudget && !run.budget) run.budget = data.runBudget;
      open.set(data.reservationId, { sessionId: data.sessionId, runId: data.runId, amounts });
      for (const use of scopes(run)) add(use.reserved, amounts, 1);
    } else if (isEventOfType(event, "budget.settled")) {
      const { data } = event;
      const run = touch(data.runId, data.sessionId, at);
      const reserved = open.get(data.reservationId);
      open.delete(data.reservationId);
      for (const use of scopes(run)) {
        if (reserved) add(use.reserved, reserved.amounts, -1);
        add(use.used, amountsOf(data), 1);
      }
    } else if (isEventOfType(event, "budget.reset")) {
      sessions.delete(event.data.sessionId);
      epochs.set(event.data.sessionId, epochOf(event.data.sessionId) + 1);
    }
  };
  const catchUp = async () => {
    for (const event of await log.readStream(streamId, { fromVersion: version + 1 })) apply(event);
  };
  const fold: LedgerFold = {
    tenant: tenantUse,
    session: (id) => sessions.get(id) ?? emptyUse(),
    run: (id) => runs.get(id) ?? emptyUse(),
    runBudget: (id) => runs.get(id)?.budget,
    runElapsedMs: (id, now) => {
      const run = runs.get(id);
      return run ? Math.max(0, now - run.firstAt) : 0;
    },
  };
  /** One ledger operation at a time in this process. */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work);
    chain = next.catch(ignoreError("a failed ledger operation rejects its own caller; the chain only orders the next one"));
    return next;
  };

  return {
    streamId,
    reserve: (reservation, check) =>
      serial(async () => {
        for (let attempt = 0; ; attempt += 1) {
          await catchUp();
          const refusal = check(fold);
          if (refusal !== undefined) return { ok: false as const, refusal };
          const { runBudget, ...rest } = reservation;
          try {
            const result = await log.append(streamId, [{ type: "budget.reserved", data: { ...rest, ...(runBudget ? { runBudget } : {}) } }], { expectedVersion: version });
            for (const event of result.events) apply(event);
            return { ok: true as const };
          } catch (error) {
            // Another process reserved first: decide again on the fold that holds its reservation.
            if (!ExpectedVersionConflictError.isInstance(error) || attempt >= MAX_ATTEMPTS) throw error;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * Math.min(attempt + 1, 10)));
          }
        }
      }),
    settle: (settlement) =>
      serial(async () => {
        await log.append(streamId, [{ type: "budget.settled", data: settlement }]);
        await catchUp();
      }),
    read: () =>
      serial(async () => {
        await catchUp();
        return fold;
      }),
  };
}

const ledgers = new WeakMap<EventLog, Map<string, BudgetLedger>>();

/**
 * The ledger of `tenant` in `log`, one per log and tenant in this process (shared by every session of the tenant, so their calls are decided one at a
 * time here).
 *
 * @example
 * ```ts
 * const fold = await budgetLedgerOf(log, "default").read();
 * console.log(fold.tenant.used.tokens);
 * ```
 */
export function budgetLedgerOf(log: EventLog, tenant: string): BudgetLedger {
  let byTenant = ledgers.get(log);
  if (!byTenant) ledgers.set(log, (byTenant = new Map()));
  let ledger = byTenant.get(tenant);
  if (!ledger) byTenant.set(tenant, (ledger = createLedger(log, tenant)));
  return ledger;
}

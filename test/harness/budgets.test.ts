/**
 * Budgets (`docs/budgets.md`) on a real harness over a real SQLite file: each limit stops the run
 * `budget_exceeded` with a `budget.exceeded` event naming it, with parallel tool calls; the
 * ledger in the log holds what was reserved and settled (estimates marked); session and tenant
 * budgets hold across runs and sessions; per-prompt budgets; bad budgets are refused by name.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseBudget } from "../../src/core/budget.ts";
import { HarnessConfigError, InvalidArgumentError } from "../../src/core/errors.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import type { HarnessBudget } from "../../src/harness/budget-options.ts";
import { budgetStreamId } from "../../src/store/budget-ledger.ts";
import type { StoredEvent } from "../../src/store/event-log.ts";
import { scriptedModel, type ScriptedStep } from "../../src/testing/scripted-model.ts";

let harness: AgentHarness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A tool that counts its executions (and may take `ms`). */
function countingTool(ms = 0) {
  const calls: string[] = [];
  const tool = defineTool({
    name: "work",
    description: "Does some work",
    parameters: z.object({ n: z.number() }),
    execute: async (args: { n: number }) => {
      calls.push(String(args.n));
      if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: "text" as const, text: `done ${args.n}` }] };
    },
  });
  return { tool, calls };
}

const parallel = (turn: number, count: number): ScriptedStep => ({
  toolCalls: Array.from({ length: count }, (_, index) => ({ id: `t${turn}c${index}`, name: "work", arguments: { n: turn * 10 + index } })),
  usage: { input: 1000, output: 500 },
});

async function open(steps: ScriptedStep[], budget: HarnessBudget | undefined, options: { ms?: number; cost?: { input: number; output: number } } = {}) {
  dir ??= mkdtempSync(join(tmpdir(), "arbor-budget-"));
  const counting = countingTool(options.ms);
  const model = scriptedModel(steps);
  harness = await createHarness({
    eventLogPath: join(dir, "arbor.db"),
    cwd: dir,
    models: { m: options.cost ? { model, cost: options.cost } : model },
    tools: [counting.tool],
    ...(budget ? { budget } : {}),
  });
  return { harness, calls: counting.calls, model };
}

async function ledger(h: AgentHarness, tenant = "default"): Promise<StoredEvent[]> {
  return h.repository!.log.readStream(budgetStreamId(tenant));
}

async function sessionEvents(h: AgentHarness): Promise<StoredEvent[]> {
  return h.repository!.log.readStream(`session-${h.getState().sessionId}`);
}

describe("budgets: each limit", () => {
  it("maxToolCalls with parallel calls: two of three calls run, the third is refused and the run ends budget_exceeded", async () => {
    const { harness: h, calls } = await open([parallel(0, 3), { text: "never" }], { run: { maxToolCalls: 2 } });
    const outcome = await h.prompt("go");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ scope: "run", limit: "maxToolCalls", max: 2 });
    expect(outcome.error).toBe(`Budget exceeded: the run's maxToolCalls is 2 tool calls (used ${outcome.budget!.used}, reserved ${outcome.budget!.reserved}, requested 1).`);
    expect(calls.length).toBe(2);
    const events = await sessionEvents(h);
    const exceeded = events.filter((event) => event.type === "budget.exceeded");
    expect(exceeded).toHaveLength(1);
    expect(exceeded[0].data).toMatchObject({ scope: "run", limit: "maxToolCalls", max: 2, call: "tool", requested: 1 });
    const ended = events.filter((event) => event.type === "run.ended");
    expect(ended.at(-1)!.data).toMatchObject({ status: "budget_exceeded", limit: "maxToolCalls", scope: "run" });
    // Every call has a result (the pairing invariant): the refused one says why.
    const toolEnded = events.filter((event) => event.type === "tool.ended");
    expect(toolEnded).toHaveLength(3);
    // The ledger: one model call and two tool calls reserved and settled.
    const log = await ledger(h);
    const reserved = log.filter((event) => event.type === "budget.reserved");
    const settled = log.filter((event) => event.type === "budget.settled");
    expect(reserved.map((event) => (event.data as { kind: string }).kind).sort()).toEqual(["model", "tool", "tool"]);
    expect(settled).toHaveLength(3);
    // The next prompt is a new run with its own budget.
    expect(h.getState().status).toBe("idle");
  });

  it("a call the budget refuses did not run: its result says skipped with the budget's reason, never aborted while running", async () => {
    const { harness: h, calls } = await open([parallel(0, 2), parallel(1, 2), { text: "never" }], { run: { maxToolCalls: 2, maxTurns: 10 } });
    const outcome = await h.prompt("fix the failing test");
    expect(outcome.status).toBe("budget_exceeded");
    expect(calls).toEqual(["0", "1"]);
    const events = await sessionEvents(h);
    const ended = events.filter((event) => event.type === "tool.ended").map((event) => event.data as { toolCallId: string; outcome: string });
    expect(ended.map((data) => [data.toolCallId, data.outcome]).sort()).toEqual([
      ["t0c0", "succeeded"],
      ["t0c1", "succeeded"],
      ["t1c0", "skipped"],
      ["t1c1", "skipped"],
    ]);
    const texts = JSON.stringify(events.map((event) => event.data));
    expect(texts).not.toMatch(/aborted while running/);
    expect(texts).toMatch(/Tool \\"work\\" did not run: the run was aborted \(Budget exceeded: the run's maxToolCalls is 2/);
  });

  it("maxTurns: the third model call is refused; a retried turn is not counted twice", async () => {
    const { harness: h, calls, model } = await open([parallel(0, 2), parallel(1, 2), { text: "never" }], { run: { maxTurns: 2 } });
    const outcome = await h.prompt("go");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ limit: "maxTurns", used: 2, max: 2 });
    expect(model.doStreamCalls.length).toBe(2);
    expect(calls.length).toBe(4);
  });

  it("maxTokens: calls go on while the settled tokens leave room, then the next is refused", async () => {
    const { harness: h, model } = await open([parallel(0, 2), parallel(1, 2), parallel(2, 2), { text: "never" }], { run: { maxTokens: 2500 } });
    const outcome = await h.prompt("go");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ limit: "maxTokens", used: 3000, max: 2500, reserved: 0 });
    expect(model.doStreamCalls.length).toBe(2);
  });

  it("maxCostUsd: priced with the registry's prices; a cost limit on a model without prices fails the run", async () => {
    // $1 per million input tokens, $2 per million output: 1000 in + 500 out = $0.002 a call.
    const { harness: h, model } = await open([parallel(0, 1), parallel(1, 1), { text: "never" }], { session: { maxCostUsd: 0.003 } }, { cost: { input: 1, output: 2 } });
    const outcome = await h.prompt("go");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ scope: "session", limit: "maxCostUsd" });
    expect(outcome.budget!.used).toBeCloseTo(0.004, 6);
    expect(model.doStreamCalls.length).toBe(2);
    await h.close();
    harness = undefined;
    rmSync(dir!, { recursive: true, force: true });
    dir = undefined;

    const unpriced = await open([{ text: "hi" }], { run: { maxCostUsd: 1 } });
    const failed = await unpriced.harness.prompt("go");
    expect(failed.status).toBe("failed");
    expect(failed.code).toBe("BUDGET_UNPRICED");
    expect(failed.error).toMatch(/maxCostUsd.*no prices/);
    expect(unpriced.model.doStreamCalls.length).toBe(0);
  });

  it("maxDurationMs: a call after the run's wall time is refused", async () => {
    const { harness: h, calls, model } = await open([parallel(0, 2), parallel(1, 2), { text: "never" }], { run: { maxDurationMs: 150 } }, { ms: 250 });
    const outcome = await h.prompt("go");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ limit: "maxDurationMs", max: 150 });
    expect(outcome.budget!.used).toBeGreaterThanOrEqual(150);
    // The first model call starts at 0 ms; the tools take 250 ms, so the second model call is refused
    // (on a loaded machine the tools themselves may already be refused, if the first call took 150 ms).
    expect(model.doStreamCalls.length).toBe(1);
    expect(calls.length).toBeLessThanOrEqual(2);
  });

  it("maxDurationMs also stops a run between checks: a tool call still running when the wall time runs out is aborted", async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-budget-"));
    const aborted: string[] = [];
    const wait = defineTool({
      name: "wait",
      description: "Waits until aborted",
      parameters: z.object({}),
      // Never returns by itself: only the budget's deadline can end this run.
      execute: (_args: Record<string, never>, context: { toolCallId: string; signal: AbortSignal }) =>
        new Promise<never>((_, reject) => context.signal.addEventListener("abort", () => (aborted.push(context.toolCallId), reject(new Error("aborted"))), { once: true })),
    });
    harness = await createHarness({
      eventLogPath: join(dir, "arbor.db"),
      cwd: dir,
      models: { m: scriptedModel([{ toolCalls: [{ id: "w1", name: "wait", arguments: {} }] }, { text: "never" }]) },
      tools: [wait],
      budget: { run: { maxDurationMs: 200 } },
    });
    const outcome = await harness.prompt("wait");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ scope: "run", limit: "maxDurationMs", max: 200 });
    expect(aborted).toEqual(["w1"]);
    const exceeded = (await sessionEvents(harness)).find((event) => event.type === "budget.exceeded");
    expect(exceeded?.data).toMatchObject({ call: "deadline", limit: "maxDurationMs" });
  });

  it("unknown usage is estimated from the text (characters / 4) and marked in the ledger, never 0", async () => {
    const text = "x".repeat(4000);
    const { harness: h } = await open([{ text, usage: null }], { run: { maxTokens: 100_000 } });
    expect((await h.prompt("go")).status).toBe("done");
    const settled = (await ledger(h)).filter((event) => event.type === "budget.settled");
    expect(settled).toHaveLength(1);
    const data = settled[0].data as { tokens: number; estimated: boolean };
    expect(data.estimated).toBe(true);
    expect(data.tokens).toBeGreaterThanOrEqual(1000);
  });
});

describe("budgets: scopes and where they are set", () => {
  it("a session budget holds across runs; a per-prompt budget limits only its run", async () => {
    const { harness: h, model } = await open([parallel(0, 1), { text: "one" }, parallel(1, 1), { text: "never" }], { session: { maxTurns: 3 } });
    expect((await h.prompt("first")).status).toBe("done");
    const second = await h.prompt("second");
    expect(second.status).toBe("budget_exceeded");
    expect(second.budget).toMatchObject({ scope: "session", limit: "maxTurns", used: 3 });
    expect(model.doStreamCalls.length).toBe(3);
  });

  it("a prompt's budget applies to its run on top of the harness's (the stricter holds)", async () => {
    const { harness: h, calls } = await open([parallel(0, 3), { text: "never" }], { run: { maxToolCalls: 10 } });
    const outcome = await h.prompt("go", undefined, { budget: { run: { maxToolCalls: 1 } } });
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ limit: "maxToolCalls", max: 1 });
    expect(calls.length).toBe(1);
  });

  it("a tenant budget (a function of the tenant) holds across the tenant's sessions", async () => {
    const limits = (tenant: string) => (tenant === "default" ? { maxToolCalls: 3 } : undefined);
    const { harness: h, calls } = await open([parallel(0, 2), { text: "a" }, parallel(1, 2), { text: "never" }], { tenant: limits });
    expect((await h.prompt("first")).status).toBe("done");
    const other = await h.createSession();
    const outcome = await other.prompt("second");
    expect(outcome.status).toBe("budget_exceeded");
    expect(outcome.budget).toMatchObject({ scope: "tenant", limit: "maxToolCalls", max: 3 });
    expect(calls.length).toBe(3);
  });
});

describe("budgets: bad input", () => {
  it("parseBudget reads the CLI syntax and names what is wrong", () => {
    expect(parseBudget("cost=0.50,tokens=20000,tool-calls=50,turns=10,duration=10m")).toEqual({ maxCostUsd: 0.5, maxTokens: 20000, maxToolCalls: 50, maxTurns: 10, maxDurationMs: 600_000 });
    expect(parseBudget("duration=1500")).toEqual({ maxDurationMs: 1500 });
    expect(() => parseBudget("tokens=lots")).toThrow(/tokens="lots" must be a finite number/);
    for (const key of ["constructor", "__proto__", "toString", "hasOwnProperty"]) expect(() => parseBudget(`${key}=5`)).toThrow(new RegExp(`unknown key "${key}"`));
    expect(() => parseBudget("tokns=5")).toThrow(/unknown key "tokns"/);
    expect(() => parseBudget("turns=1.5")).toThrow(/turns="1.5" must be a whole number/);
    // Over 2^53 the number is not exact: said as too large, not as not whole.
    expect(() => parseBudget("tokens=9007199254740993")).toThrow('tokens="9007199254740993" is above the largest supported value, 9007199254740991 (Number.MAX_SAFE_INTEGER).');
    expect(() => parseBudget("duration=9007199254740993ms")).toThrow(/is above the largest supported value, 9007199254740991/);
    expect(parseBudget("tokens=9007199254740991")).toEqual({ maxTokens: Number.MAX_SAFE_INTEGER });
    expect(() => parseBudget("duration=10 minutes")).toThrow(/duration "10 minutes" is not a duration/);
    expect(() => parseBudget("turns=1,turns=2")).toThrow(/"turns" is given twice/);
    expect(() => parseBudget("")).toThrow(InvalidArgumentError);
  });

  it("createHarness refuses a bad budget naming the field", async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-budget-"));
    const base = { eventLogPath: join(dir, "arbor.db"), cwd: dir, models: { m: scriptedModel([]) } };
    await expect(createHarness({ ...base, budget: { run: { maxTurns: -1 } } })).rejects.toThrow(HarnessConfigError);
    await expect(createHarness({ ...base, budget: { run: { maxTurns: -1 } } })).rejects.toThrow(/budget\.run\.maxTurns must be a finite number ≥ 0/);
    await expect(createHarness({ ...base, budget: { run: { maxTurn: 3 } } as never })).rejects.toThrow(/unknown limit "maxTurn"/);
    await expect(createHarness({ ...base, budget: { tenant: { maxTokens: 2 ** 60 } } })).rejects.toThrow(/budget\.tenant\.maxTokens is above the largest supported value/);
    await expect(createHarness({ ...base, budget: { everyone: {} } as never })).rejects.toThrow(/unknown scope "everyone"/);
  });
});

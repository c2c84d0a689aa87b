/**
 * Model-based tests of the machines, through the agent test kit (`arbor-agent/testing`): paths
 * from `xstate/graph` (guard-aware) over the tool-execution and run machines, each EXECUTED on a
 * real harness over a real SQLite file with real tools and hooks (only the model is scripted),
 * checked against the path (states the actors pass through, run endings, tool outcomes, model
 * calls) and Arbor's invariants (calls paired, no tool after an abort, replay equals live,
 * explained before). And at every state of the agent machine, "the owner dies here": a real
 * owner process killed with SIGKILL in that state, the run continued by another process
 * (`owner-dies.ts`), on SQLite and on PostgreSQL.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import { createAgentTestModel, type AgentTestPath, type RunScenario, type ToolScenario } from "../../src/testing/index.ts";
import { slotPaths, type SlotPath } from "../../src/testing/slot-graph.ts";
import { executeSlotPath } from "../../src/testing/slot-runner.ts";
import { agentMachine } from "../../src/machines/agent.machine.ts";
import { useTestSchemas } from "../store/pg-test-db.ts";
import { OWNER_DIES, ownerDiesIn, type Backend } from "./owner-dies.ts";

const files = new Map<string, string>([["a.txt", "alpha"]]);
const read = defineTool({
  name: "read",
  description: "Reads a file",
  parameters: z.object({ path: z.string() }),
  async execute({ path }) {
    return { content: [{ type: "text", text: files.get(path) ?? "" }] };
  },
});
const write = defineTool({
  name: "write",
  description: "Writes a file (needs approval)",
  parameters: z.object({ path: z.string(), text: z.string() }),
  async execute({ path, text }) {
    files.set(path, text);
    return { content: [{ type: "text", text: `wrote ${path}` }] };
  },
});
const model = createAgentTestModel({
  tools: [read, write],
  hooks: { toolCall: ({ input }) => (String(input.path).startsWith("/") ? { block: true, reason: "absolute paths are refused" } : undefined) },
  requireApproval: ["write"],
  arguments: { read: { path: "a.txt" }, write: { path: "b.txt", text: "beta" } },
});
const named = (paths: AgentTestPath[]) => paths.map((path) => [path.description, path] as const);

describe("tool-execution machine: every simple path, executed", () => {
  const paths = model.getSimplePaths({ machines: ["toolExecution"] });

  it("covers every state of the machine (write needs approval: it also ends gated)", () => {
    expect([...new Set(paths.map((path) => path.state))].sort()).toEqual(
      ["aborted", "blocked", "executing", "failed", "finalizing", "gated", "invalid", "not_found", "preparing", "ready", "skipped", "succeeded", "timed_out"].sort(),
    );
    expect(paths.filter((path) => path.state === "gated").map((path) => (path.scenario as ToolScenario).tool)).toEqual(["write"]);
  });

  it.each(named(paths))("%s", async (_name, path) => {
    const report = await path.test();
    const scenario = path.scenario as ToolScenario;
    if (scenario.final && scenario.end !== "gated") expect(report.toolOutcomes.kit_c1).toBe(scenario.end);
    if (scenario.end === "gated") expect(report.runStatuses).toEqual(["suspended"]);
  }, 60_000);
});

describe("run machine: shortest paths to every state × every model answer, executed", () => {
  const paths = model.getShortestPaths({ machines: ["run"] });

  it("reaches done, failed, aborted, interrupted and suspended, and decides approvals every way", () => {
    const scenarios = paths.map((path) => path.scenario as RunScenario);
    expect(new Set(scenarios.map((scenario) => (scenario.approval ? `${scenario.approval}:${scenario.end}` : scenario.end)))).toEqual(
      new Set(["done", "failed", "aborted", "interrupted", "suspended", "approved:done", "denied:done", "cancelled:aborted"]),
    );
  });

  it.each(named(paths))("%s", async (_name, path) => {
    const report = await path.test();
    const scenario = path.scenario as RunScenario;
    expect(report.runStatuses.at(-1)).toBe(scenario.end);
  }, 60_000);
});

describe("agent machine: every simple path through the approval states, executed", () => {
  const paths = slotPaths();

  it("reaches awaiting-approval and leaves it every way (resume approved or denied, abort, a refused resume, a restart, another process's resume)", () => {
    const after = (path: SlotPath) => path.steps.slice(path.steps.findIndex((step) => step.state === "awaiting-approval"));
    const exits = new Set<string>();
    for (const path of paths) {
      const steps = after(path);
      for (const [index, step] of steps.entries()) {
        if (steps[index - 1]?.state === "awaiting-approval" && step.state !== "awaiting-approval") exits.add(step.event.type);
      }
    }
    expect([...exits].sort()).toEqual(["ABORT", "APPROVAL.CLEAR", "CONTINUE", "kit.restart"].sort());
    const endings = new Set(paths.map((path) => `${path.steps.at(-1)!.state}:${path.steps.findLast((step) => step.runStatus)?.runStatus}`));
    expect(endings).toEqual(new Set(["awaiting-approval:suspended", "idle:done", "idle:aborted", "idle:suspended"]));
    expect(paths.some((path) => path.steps.some((step) => step.event.type === "APPROVAL.AWAIT"))).toBe(true);
  });

  it.each(paths.map((path) => [path.description, path] as const))("%s", async (_name, path) => {
    const report = await executeSlotPath(path);
    expect(report.readRuns).toBe(1);
  }, 60_000);
});

describe.each<Backend>(["sqlite", "pg"])("agent machine: the owner dies in every state, another process continues (%s)", { timeout: 180_000 }, (backend) => {
  const newSchema = useTestSchemas("dies");
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it("has a kill point for every state of the machine", () => {
    expect(Object.keys(OWNER_DIES).sort()).toEqual(Object.keys(agentMachine.root.states).sort());
  });

  it.each(Object.keys(OWNER_DIES))("killed in %s: the run ends done, every call paired, nothing duplicated", async (state) => {
    await ownerDiesIn(backend, state, newSchema, closers);
  });
});

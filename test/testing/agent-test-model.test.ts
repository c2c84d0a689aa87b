/**
 * The agent test kit on a user's harness: two real tools (files in a temp directory) and a
 * `toolCall` hook. Every generated path is executed against a real harness; a seeded bug in
 * the user's hook is found and reported as a path.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/core/tools.ts";
import type { HarnessHooks } from "../../src/harness/hook-types.ts";
import { AgentTestPathError, createAgentTestModel, MODEL_ANSWER_KINDS, type AgentTestConfig, type AgentTestPath, type RunScenario, type ToolScenario } from "../../src/testing/index.ts";

const dir = mkdtempSync(join(tmpdir(), "arbor-kit-tools-"));
writeFileSync(join(dir, "notes.txt"), "remember the milk");
const read = defineTool({
  name: "read",
  description: "Reads a file of the workspace",
  parameters: z.object({ path: z.string() }),
  async execute({ path }) {
    return { content: [{ type: "text", text: readFileSync(join(dir, path), "utf8") }] };
  },
});
const write = defineTool({
  name: "write",
  description: "Writes a file of the workspace",
  parameters: z.object({ path: z.string(), text: z.string() }),
  async execute({ path, text }) {
    writeFileSync(join(dir, path), text);
    return { content: [{ type: "text", text: `wrote ${text.length} bytes` }] };
  },
});
/** The user's policy hook: nothing leaves the workspace. */
const guard: HarnessHooks["toolCall"] = ({ input }) => (String(input.path).includes("..") ? { block: true, reason: "outside the workspace" } : undefined);
const config: AgentTestConfig = {
  tools: [read, write],
  hooks: { toolCall: guard },
  arguments: { read: { path: "notes.txt" }, write: { path: "out.txt", text: "hello" } },
};

describe("createAgentTestModel: every generated path over two tools and a toolCall hook", () => {
  const model = createAgentTestModel(config);
  const paths = model.getSimplePaths();
  const toolPaths = paths.filter((path) => path.machine === "toolExecution");
  const runPaths = paths.filter((path) => path.machine === "run");
  console.log(`agent test kit: ${paths.length} paths (${toolPaths.length} tool-execution simple paths, ${runPaths.length} run paths)`);

  it("covers every tool-execution state per tool, every run ending and every model-answer kind", () => {
    for (const tool of ["read", "write"]) {
      const ends = new Set(toolPaths.filter((path) => (path.scenario as ToolScenario).tool === tool).map((path) => path.state));
      expect([...ends].sort()).toEqual(["aborted", "blocked", "executing", "failed", "finalizing", "invalid", "not_found", "preparing", "ready", "skipped", "succeeded", "timed_out"]);
    }
    const scenarios = runPaths.map((path) => path.scenario as RunScenario);
    expect(new Set(scenarios.map((scenario) => scenario.end))).toEqual(new Set(["done", "failed", "aborted", "interrupted"]));
    expect(new Set(scenarios.flatMap((scenario) => scenario.answers))).toEqual(new Set(MODEL_ANSWER_KINDS));
    expect(new Set(scenarios.flatMap((scenario) => (scenario.abort ? [scenario.abort.in] : [])))).toEqual(new Set(["streaming", "retrying", "toolsPreparing", "toolsExecuting"]));
    expect(scenarios.some((scenario) => scenario.steering.length > 0)).toBe(true);
    expect(scenarios.some((scenario) => scenario.followUps.length > 0)).toBe(true);
    // Each state the run passes through is followed, somewhere, by each answer kind.
    for (const state of ["streaming", "steering", "followUp", '{"tools":"waiting"}', "retrying"]) {
      for (const kind of MODEL_ANSWER_KINDS) {
        expect(scenarios.some((scenario) => scenario.states.includes(state) && scenario.answers.includes(kind)), `${state} × ${kind}`).toBe(true);
      }
    }
  });

  it.each(paths.map((path) => [path.description, path] as const))("%s", async (_name, path: AgentTestPath) => {
    const report = await path.test();
    expect(report.runStatuses.length).toBeGreaterThan(0);
  }, 60_000);
});

describe("createAgentTestModel: approval states", () => {
  const model = createAgentTestModel({ ...config, requireApproval: ["write"] });
  const paths = model.getShortestPaths();

  it("gates write, runs it after an approval, and decides suspensions both ways", () => {
    expect(paths.some((path) => path.machine === "toolExecution" && path.state === "gated" && (path.scenario as ToolScenario).tool === "write")).toBe(true);
    expect(paths.some((path) => path.machine === "toolExecution" && path.state === "gated" && (path.scenario as ToolScenario).tool === "read")).toBe(false);
    const approvals = paths.flatMap((path) => (path.machine === "run" && (path.scenario as RunScenario).approval ? [(path.scenario as RunScenario).approval] : []));
    expect(new Set(approvals)).toEqual(new Set(["approved", "denied", "cancelled"]));
  });

  it.each(paths.filter((path) => path.machine === "run" ? (path.scenario as RunScenario).gated : (path.scenario as ToolScenario).tool === "write").map((path) => [path.description, path] as const))(
    "%s",
    async (_name, path: AgentTestPath) => {
      await path.test();
    },
    60_000,
  );
});

describe("createAgentTestModel: a seeded bug in the user's hook", () => {
  /** The bug: the hook counts calls per tool and throws on the second call of one. */
  const buggyHooks = (): HarnessHooks => {
    const calls = new Map<string, number>();
    return {
      toolCall: (event) => {
        const count = (calls.get(event.toolName) ?? 0) + 1;
        calls.set(event.toolName, count);
        if (count === 2) throw new Error(`rate table not loaded for ${event.toolName}`);
        return guard(event);
      },
    };
  };

  it("is found, and each failing path is reported as its steps with the blocked call", async () => {
    const model = createAgentTestModel({ ...config, hooks: buggyHooks });
    const paths = model.getShortestPaths({ machines: ["run"] });
    const failed: { path: AgentTestPath; error: AgentTestPathError }[] = [];
    for (const path of paths) {
      try {
        await path.test();
      } catch (error) {
        if (!AgentTestPathError.isInstance(error)) throw error;
        failed.push({ path, error });
      }
    }
    expect(failed.length).toBeGreaterThan(0);
    // Exactly the paths where the model calls the tools twice fail (the hook sees each tool twice).
    const twice = (path: AgentTestPath) => (path.scenario as RunScenario).answers.filter((kind) => kind === "toolCalls").length >= 2;
    expect(failed.map(({ path }) => path.description).sort()).toEqual(paths.filter(twice).map((path) => path.description).sort());
    const { error, path } = failed[0];
    expect(error.code).toBe("AGENT_TEST_PATH_FAILED");
    expect(error.details.steps).toEqual(path.steps.map((step) => `${step.description} → ${step.state}`));
    expect(error.details.failures).toContainEqual({ check: "tool-outcome", message: expect.stringMatching(/^tool call kit_\d+_0 ended "blocked"; the path expects "succeeded"$/) });
    expect(error.message).toContain("1. the steering queue is empty → streaming");
    expect(error.message).toMatch(/\d+\. the model answers with tool calls → \{"tools":"waiting"\}/);
    console.log(`seeded bug found on ${failed.length} of ${paths.length} run paths; the first report:\n${error.message}`);
  }, 300_000);
});

describe("createAgentTestModel: the kit's hooks run before the user's", () => {
  it("a user hook that throws on a tool's second call does not keep the abort-while-ready path's abort from coming: the path passes, and the user's hook never sees that call", async () => {
    const seen: string[] = [];
    const hooks = (): HarnessHooks => {
      const calls = new Map<string, number>();
      return {
        toolCall: (event) => {
          seen.push(event.toolCallId);
          calls.set(event.toolName, (calls.get(event.toolName) ?? 0) + 1);
          if (calls.get(event.toolName) === 2) throw new Error("rate table not loaded");
          return undefined;
        },
      };
    };
    const model = createAgentTestModel({ tools: [read], hooks, arguments: { read: { path: "notes.txt" } } });
    const path = model.getSimplePaths().find((candidate) => candidate.description === "tool-execution (read): the call of read is prepared → ready; the user aborts → skipped");
    expect(path).toBeDefined();
    const report = await path!.test();
    expect(report.toolOutcomes).toMatchObject({ kit_c1: "skipped" });
    expect(report.runStatuses).toEqual(["aborted"]);
    // The kit's hook aborted at kit_c2 before the user's hook ran for it.
    expect(seen).not.toContain("kit_c2");
  }, 120_000);
});

describe("createAgentTestModel: user invariants and bad configuration", () => {
  it("runs the user's invariant on every path and reports its failure by name", async () => {
    const model = createAgentTestModel({
      ...config,
      invariants: [{ name: "no-write-of-secrets", check: ({ events }) => { if (events.some((event) => event.type === "tool.ended" && (event.data as { toolName: string }).toolName === "write")) throw new Error("write ran"); } }],
    });
    const path = model.getShortestPaths({ machines: ["toolExecution"] }).find((candidate) => (candidate.scenario as ToolScenario).tool === "write" && candidate.state === "succeeded")!;
    await expect(path.test()).rejects.toThrow(/\[no-write-of-secrets\] write ran/);
    const readPath = model.getShortestPaths({ machines: ["toolExecution"] }).find((candidate) => (candidate.scenario as ToolScenario).tool === "read" && candidate.state === "succeeded")!;
    await expect(readPath.test()).resolves.toMatchObject({ toolOutcomes: { kit_c1: "succeeded" } });
  }, 60_000);

  it("refuses no tools and duplicate names", () => {
    expect(() => createAgentTestModel({ tools: [] })).toThrow(/`tools` is empty/);
    expect(() => createAgentTestModel({ tools: [read, read] })).toThrow(/two tools are named "read"/);
  });
});

/**
 * `createAgentTestModel`: model-based tests of a user's agent, shaped like xstate's `TestModel`. Paths through the tool-execution and run machines
 * (`path-graph.ts`: model answers, tool outcomes, queues, aborts, approvals) are executed by `path.test()` on a real harness with the user's tools and
 * hooks (`path-runner.ts`), checking every invariant and throwing {@link AgentTestPathError}. No test framework imported; `hooks` may be a
 * per-path factory.
 */
import type { AgentTool } from "../core/tools.ts";
import { InvalidArgumentError } from "../core/errors.ts";
import type { JsonSchemaTool } from "../adapters/tools/tool-schema.ts";
import type { HarnessHooks } from "../harness/hook-types.ts";
import type { AgentHarnessOptions } from "../harness/options.ts";
import type { AgentInvariant } from "./invariants.ts";
import { answerKindOf, runPaths, toolPaths, type GraphPath, type RunScenario, type ToolScenario } from "./path-graph.ts";
import { describeSteps } from "./path-report.ts";
import { executePath, type PathReport } from "./path-runner.ts";

/**
 * The user's harness configuration the paths run against.
 * @example
 * const config: AgentTestConfig = { tools: [readTool], hooks: { toolCall: guard }, requireApproval: ["write"], arguments: { read: { path: "a.txt" } } };
 */
export interface AgentTestConfig {
  /** The user's tools (Arbor tools or JSON-Schema tools), at least one. */
  tools: (AgentTool<any, any, any> | JsonSchemaTool<any>)[];
  /** The user's hooks, or a function that makes them afresh for each path. */
  hooks?: HarnessHooks | (() => HarnessHooks);
  /** The approval policy by tool name (the harness's `requireApproval`). */
  requireApproval?: readonly string[] | "all";
  /** Valid arguments per tool name, used whenever the model calls it (default `{}`). */
  arguments?: Record<string, Record<string, unknown>>;
  /** More harness options (system prompt, tool execution mode, ...); the kit sets the log, model, cwd, retry and inspection. */
  harness?: Partial<Omit<AgentHarnessOptions, "tools" | "hooks" | "requireApproval" | "models" | "eventLog" | "eventLogPath" | "session" | "repository">>;
  /** Checks of the user's own, run on every path after Arbor's. */
  invariants?: AgentInvariant[];
  /** Time a path may take before it fails, in ms (default 10000). */
  timeoutMs?: number;
}

/**
 * One step of a path: what happens, and the machine state it leads to.
 * @example
 * const step: AgentTestStep = { description: "the model answers with tool calls", state: "{\"tools\":\"waiting\"}" };
 */
export interface AgentTestStep {
  description: string;
  state: string;
}

/**
 * A generated path: which machine it walks, its readable steps, and `test()` to execute it.
 * @example
 * const report = await path.test(); // throws AgentTestPathError if the path does not hold
 */
export interface AgentTestPath {
  machine: "toolExecution" | "run";
  /** The steps joined, prefixed by the machine (and tool): a test name. */
  description: string;
  steps: AgentTestStep[];
  /** The state the path ends in. */
  state: string;
  scenario: ToolScenario | RunScenario;
  /** Executes the path (see the module contract); resolves with what happened, or throws AgentTestPathError. */
  test(): Promise<PathReport>;
}

/**
 * Which machines a path set covers (default both).
 * @example
 * model.getSimplePaths({ machines: ["toolExecution"] });
 */
export interface AgentPathOptions {
  machines?: ("toolExecution" | "run")[];
}

/**
 * The test model of a user's agent (see the module contract).
 * @example
 * const paths = createAgentTestModel(config).getShortestPaths();
 */
export interface AgentTestModel {
  getShortestPaths(options?: AgentPathOptions): AgentTestPath[];
  getSimplePaths(options?: AgentPathOptions): AgentTestPath[];
}

function toolNeedsApproval(tool: { name: string; needsApproval?: unknown }, policy: AgentTestConfig["requireApproval"]): boolean {
  return (tool.needsApproval !== undefined && tool.needsApproval !== false) || policy === "all" || (policy ?? []).includes(tool.name);
}

/**
 * Creates the test model of an agent from its harness configuration (see the module contract).
 * Throws InvalidArgumentError when `tools` is empty or two tools share a name.
 * @example
 * const model = createAgentTestModel({ tools: [readTool, writeTool], hooks: { toolCall: guard } });
 * const paths = model.getSimplePaths();
 * console.log(`${paths.length} paths`);
 * for (const path of paths) await path.test();
 */
export function createAgentTestModel(config: AgentTestConfig): AgentTestModel {
  if (!config.tools.length) throw new InvalidArgumentError("createAgentTestModel: `tools` is empty; the paths need at least one tool to call");
  const names = config.tools.map((tool) => tool.name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice) throw new InvalidArgumentError(`createAgentTestModel: two tools are named "${twice}"`);
  const graphTools = config.tools.map((tool) => ({ name: tool.name, needsApproval: toolNeedsApproval(tool, config.requireApproval) }));
  const toolExecution = config.harness?.toolExecution ?? "parallel";

  const toPath = (graph: GraphPath): AgentTestPath => {
    const tool = graph.scenario.machine === "toolExecution" ? graph.scenario.tool : undefined;
    const steps = describeSteps(graph.steps, answerKindOf, tool);
    const state = graph.scenario.machine === "toolExecution" ? graph.scenario.end : graph.scenario.end;
    const prefix = tool ? `tool-execution (${tool})` : "run";
    const description = `${prefix}: ${steps.length ? steps.join("; ") : `starts → ${state}`}`;
    return {
      machine: graph.scenario.machine,
      description,
      steps: graph.steps.map((step, index) => ({ description: steps[index].replace(/ → [^→]*$/, ""), state: step.state })),
      state,
      scenario: graph.scenario,
      test: () => {
        const hooks = typeof config.hooks === "function" ? config.hooks() : config.hooks;
        return executePath(
          {
            tools: config.tools as AgentTool<any, any, any>[],
            ...(hooks ? { hooks } : {}),
            ...(config.requireApproval ? { requireApproval: config.requireApproval } : {}),
            arguments: config.arguments ?? {},
            ...(config.harness ? { harness: config.harness } : {}),
            invariants: config.invariants ?? [],
            timeoutMs: config.timeoutMs ?? 10_000,
          },
          graph.scenario,
          steps,
          description,
        );
      },
    };
  };
  let runCache: AgentTestPath[] | undefined;
  const runSet = () => (runCache ??= runPaths({ tools: graphTools, toolExecution }).map(toPath));
  const toolSet = (mode: "simple" | "shortest") => graphTools.flatMap((tool) => toolPaths(tool, mode).map(toPath));
  const pick = (options: AgentPathOptions | undefined, mode: "simple" | "shortest") => {
    const machines = options?.machines ?? ["toolExecution", "run"];
    return [...(machines.includes("toolExecution") ? toolSet(mode) : []), ...(machines.includes("run") ? runSet() : [])];
  };
  return {
    getShortestPaths: (options) => pick(options, "shortest"),
    getSimplePaths: (options) => pick(options, "simple"),
  };
}

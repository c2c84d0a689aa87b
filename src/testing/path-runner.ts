/**
 * Executes one generated path against real actors (a real harness over a SQLite file in a temporary directory, the user's tools and hooks, a
 * scripted model derived from the path) and checks that the actors pass through the path's states, the run and tool calls end as it says, and every
 * invariant holds. Cleans up even on failure; throws {@link AgentTestPathError} listing the steps and failures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "../core/tools.ts";
import { createHarness, type AgentHarness } from "../harness/create-harness.ts";
import type { AgentHarnessOptions } from "../harness/options.ts";
import type { HarnessHooks, HandlerOf } from "../harness/hook-types.ts";
import type { StoredEvent } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import { createSqliteEventLog } from "../store/sqlite/sqlite-event-log.ts";
import { BUILT_IN_INVARIANTS, checkInvariants, type AgentInvariant } from "./invariants.ts";
import type { ModelAnswerKind, RunScenario, ToolScenario } from "./path-graph.ts";
import { hold, httpError, pathModel, wrapTool, type PathAnswer, type PathProbe, type ToolBehaviour } from "./path-fixtures.ts";
import { AgentTestPathError, type PathFailure } from "./path-report.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import type { ApprovalEndStatus } from "../core/vocabulary.ts";
import { ignoreError } from "../core/ignored.ts";

/** The user's configuration as the runner needs it (see `AgentTestConfig`). */
export interface RunnerConfig {
  tools: AgentTool<any, any, any>[];
  hooks?: HarnessHooks;
  requireApproval?: readonly string[] | "all";
  arguments: Record<string, Record<string, unknown>>;
  harness?: Partial<AgentHarnessOptions>;
  invariants: AgentInvariant[];
  timeoutMs: number;
}

/**
 * What an executed path reports: the model calls made, the tool outcomes logged, the run statuses, and how many stored events the session holds.
 * @example
 * const report: PathReport = await path.test();
 * report.toolOutcomes; // { kit_c1: "succeeded" }
 */
export interface PathReport {
  modelCalls: number;
  runStatuses: string[];
  toolOutcomes: Record<string, string>;
  events: number;
}

interface Plan {
  answers: PathAnswer[];
  behaviours: Map<string, ToolBehaviour>;
  /** Per call id: what the kit's toolCall hook does. */
  onToolCall: Map<string, "block" | "abort">;
  onToolResult: Map<string, "abort" | "error" | "success">;
  before: (index: number, probe: PathProbe, harness: () => AgentHarness) => void;
  expectedOutcomes: Map<string, string>;
  expectedStatuses: string[];
  /** Approve (or deny) the waiting calls after the first run, then continue. */
  decide?: ApprovalEndStatus;
  /** The kit's hooks act from this run on (2: only in the run that resumes after the approval). */
  activeFromRun: number;
  /** Abort when this retry is scheduled (1-based count of retries); its error asks for a long Retry-After. */
  abortOnRetry?: number;
  states: string[];
  actor: "run" | "toolExecution";
  traceOf?: string;
  /** The tool whose calls time out (its stand-in gets a short `timeoutMs`). */
  timeoutTool?: string;
}

/** The calls at which the kit's own hooks abort the run, with the hook's name. */
function plannedAborts(plan: Plan): [string, "toolCall" | "toolResult"][] {
  return [
    ...[...plan.onToolCall].filter(([, action]) => action === "abort").map(([id]): [string, "toolCall"] => [id, "toolCall"]),
    ...[...plan.onToolResult].filter(([, action]) => action === "abort").map(([id]): [string, "toolResult"] => [id, "toolResult"]),
  ];
}

/** The text of the logged result of call `id`, if any. */
function toolResultText(events: StoredEvent[], id: string): string | undefined {
  for (const event of events) {
    if (!isEventOfType(event, "entry.appended")) continue;
    const entry = event.data.entry as { type?: string; message?: { role?: string; toolCallId?: string; content?: { type: string; text?: string }[] } };
    const message = entry.type === "message" ? entry.message : undefined;
    if (message?.role === "toolResult" && message.toolCallId === id) return (message.content ?? []).map((part) => part.text ?? "").join("");
  }
  return undefined;
}

const needsApproval = (tool: AgentTool<any, any, any>, policy: RunnerConfig["requireApproval"]) =>
  tool.needsApproval !== undefined && tool.needsApproval !== false ? true : policy === "all" || (policy ?? []).includes(tool.name);

/** What every plan starts from: no hooks on calls or results, no expectations, active from the first run. */
function planDefaults(): Pick<Plan, "onToolCall" | "onToolResult" | "before" | "expectedOutcomes" | "expectedStatuses" | "activeFromRun"> {
  return { onToolCall: new Map(), onToolResult: new Map(), before: () => {}, expectedOutcomes: new Map(), expectedStatuses: [], activeFromRun: 1 };
}

function toolPlan(config: RunnerConfig, scenario: ToolScenario): Plan {
  const tool = config.tools.find((candidate) => candidate.name === scenario.tool)!;
  const args = config.arguments[tool.name] ?? {};
  const approval = needsApproval(tool, config.requireApproval);
  const name = scenario.prepare === "not_found" ? `missing_${tool.name}`.slice(0, 64) : tool.name;
  const calls = [{ id: "kit_c1", name, arguments: scenario.prepare === "invalid" ? "{\"unterminated" : args }];
  if (scenario.abortIn === "ready") calls.push({ id: "kit_c2", name: tool.name, arguments: args });
  const plan: Plan = {
    answers: [{ toolCalls: calls }],
    behaviours: new Map([["kit_c1", { ...(scenario.execution ? { execution: scenario.execution } : {}), abortOnStart: scenario.abortIn === "executing" }]]),
    ...planDefaults(),
    states: scenario.states,
    actor: "toolExecution",
    traceOf: "kit_c1",
    ...(scenario.execution === "timed_out" ? { timeoutTool: tool.name } : {}),
  };
  if (scenario.prepare === "blocked") plan.onToolCall.set("kit_c1", "block");
  if (scenario.abortIn === "preparing") plan.onToolCall.set("kit_c1", "abort");
  if (scenario.abortIn === "ready") plan.onToolCall.set("kit_c2", "abort");
  if (scenario.abortIn === "finalizing") plan.onToolResult.set("kit_c1", "abort");
  else if (scenario.finalizeError !== undefined) plan.onToolResult.set("kit_c1", scenario.finalizeError ? "error" : "success");
  const aborted = scenario.abortIn !== undefined;
  const reachesReady = scenario.prepare !== undefined && scenario.prepare !== "not_found" && scenario.prepare !== "invalid" && scenario.prepare !== "blocked" && scenario.prepare !== "gated";
  const viaApproval = approval && (reachesReady || (scenario.prepare === undefined && !aborted));
  if (scenario.final && scenario.end !== "gated") plan.expectedOutcomes.set("kit_c1", scenario.end);
  if (scenario.end === "gated") plan.expectedStatuses.push("suspended");
  else if (viaApproval) {
    plan.decide = "approved";
    plan.activeFromRun = 2;
    plan.expectedStatuses.push("suspended", aborted ? "aborted" : "done");
  } else plan.expectedStatuses.push(aborted ? "aborted" : "done");
  if (!aborted && scenario.end !== "gated") plan.answers.push({ text: "done" });
  return plan;
}

const ANSWERS: Record<Exclude<ModelAnswerKind, "toolCalls">, () => PathAnswer> = {
  text: () => ({ text: "answer" }),
  length: () => ({ text: "cut", finishReason: "length" }),
  providerError: () => httpError(400, "Bad request (scripted by the path)"),
  retryableError: () => httpError(503, "Service unavailable (scripted by the path)"),
};

function runPlan(config: RunnerConfig, scenario: RunScenario): Plan {
  const gatedTools = config.tools.filter((tool) => needsApproval(tool, config.requireApproval));
  const plan: Plan = {
    answers: [],
    behaviours: new Map(),
    ...planDefaults(),
    ...(scenario.abort?.in === "retrying" ? { abortOnRetry: scenario.answers.slice(0, scenario.abort.answer + 1).filter((kind) => kind === "retryableError").length } : {}),
    states: scenario.states,
    actor: "run",
    ...(scenario.approval ? { decide: scenario.approval } : {}),
  };
  scenario.answers.forEach((kind, index) => {
    if (kind !== "toolCalls") {
      plan.answers.push(ANSWERS[kind]());
      return;
    }
    const tools = scenario.gated && index === lastToolAnswer(scenario) ? config.tools : config.tools.filter((tool) => !gatedTools.includes(tool));
    const calls = tools.map((tool, n) => ({ id: `kit_${index}_${n}`, name: tool.name, arguments: config.arguments[tool.name] ?? {} }));
    plan.answers.push({ toolCalls: calls });
    const abortHere = scenario.abort && scenario.abort.answer === index && scenario.abort.in.startsWith("tools");
    for (const [n, call] of calls.entries()) {
      const gated = gatedTools.includes(tools[n]);
      if (abortHere) {
        if (n === 0) {
          if (scenario.abort!.in === "toolsPreparing") plan.onToolCall.set(call.id, "abort");
          else plan.behaviours.set(call.id, { abortOnStart: true });
        }
        continue;
      }
      if (!gated) plan.expectedOutcomes.set(call.id, "succeeded");
      else if (scenario.approval === "approved" || scenario.approval === "denied") plan.expectedOutcomes.set(call.id, scenario.approval === "approved" ? "succeeded" : "denied");
    }
  });
  if (scenario.abort?.in === "streaming") plan.answers[scenario.abort.answer] = "hang";
  // The retry the abort must find waiting asks for a long delay (Retry-After), so the abort comes first.
  if (scenario.abort?.in === "retrying") plan.answers[scenario.abort.answer] = httpError(503, "Service unavailable (scripted by the path)", { "retry-after": "60" });
  plan.before = (index, probe, harness) => {
    if (scenario.steering.includes(index)) harness().steer(`steering queued during model call ${index + 1}`);
    if (scenario.followUps.includes(index)) harness().followUp(`follow-up queued during model call ${index + 1}`);
    if (scenario.abort?.in === "streaming" && scenario.abort.answer === index) probe.abort("aborted by the path while the model streams");
  };
  if (scenario.approval) plan.expectedStatuses.push("suspended", scenario.approval === "cancelled" ? "aborted" : "done");
  else plan.expectedStatuses.push(scenario.end);
  return plan;
}

function lastToolAnswer(scenario: RunScenario): number {
  return scenario.answers.lastIndexOf("toolCalls");
}

/** True when `expected` occurs in `observed` in order (not necessarily adjacent). */
function isSubsequence(path: string[], observed: string[]): boolean {
  const expected = path.filter((state, index) => state !== path[index - 1]);
  let at = 0;
  for (const state of observed) if (at < expected.length && state === expected[at]) at++;
  return at === expected.length;
}

/** The `timeoutMs` of a tool whose path times out: its stand-in waits for the timer's abort. */
const TIMEOUT_MS = 20;

const stateText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** Executes `scenario` (see the module contract). */
export async function executePath(config: RunnerConfig, scenario: ToolScenario | RunScenario, steps: string[], description: string): Promise<PathReport> {
  const plan = scenario.machine === "run" ? runPlan(config, scenario) : toolPlan(config, scenario);
  const dir = mkdtempSync(join(tmpdir(), "arbor-kit-"));
  const log = createSqliteEventLog({ path: join(dir, "arbor.db") });
  let harness: AgentHarness | undefined;
  const failures: PathFailure[] = [];
  const traces = new Map<string, { id: string; states: string[] }>();
  const report: PathReport = { modelCalls: 0, runStatuses: [], toolOutcomes: {}, events: 0 };
  try {
    const probe: PathProbe = { log, streamId: "", abortRequested: false, executions: [], modelCalls: [], abort: () => {} };
    const interrupt = scenario.machine === "run" && scenario.abort?.interrupt === true;
    let disposed: Promise<void> | undefined;
    probe.abort = (reason) => {
      probe.abortRequested = true;
      // An interrupt is the host disposing the harness while the run is active (the run ends interrupted).
      if (interrupt) disposed ??= harness?.dispose();
      else harness?.abort(reason);
    };
    const wanted = plan.actor === "run" ? "run" : "toolExecution";
    const inspect = (event: { type: string; actorRef?: { sessionId: string; id?: string }; snapshot?: { machine?: { id: string }; value?: unknown } }) => {
      if (event.type !== "@xstate.snapshot" || event.snapshot?.machine?.id !== wanted || !event.actorRef) return;
      const trace = traces.get(event.actorRef.sessionId) ?? { id: event.actorRef.id ?? "", states: [] };
      const state = stateText(event.snapshot.value);
      if (trace.states.at(-1) !== state) trace.states.push(state);
      traces.set(event.actorRef.sessionId, trace);
    };
    const { retry: _retry, ...rest } = config.harness ?? {};
    // The kit's own hooks come FIRST in each chain, before the user's: a user hook that blocks or
    // throws on a call cannot keep the path's abort (or block, or error) on that call from coming.
    let run = 1;
    const kitToolCall: HandlerOf<"toolCall"> = (event) => {
      const action = run >= plan.activeFromRun ? plan.onToolCall.get(event.toolCallId) : undefined;
      if (action === "block") return { block: true, reason: "blocked by the path" };
      if (action === "abort") {
        probe.abort("aborted by the path while the call is prepared");
        return hold();
      }
      return undefined;
    };
    const kitToolResult: HandlerOf<"toolResult"> = (event) => {
      const action = run >= plan.activeFromRun ? plan.onToolResult.get(event.toolCallId) : undefined;
      if (action === "abort") {
        probe.abort("aborted by the path while the result is finalized");
        return hold();
      }
      if (action) return { isError: action === "error" };
      return undefined;
    };
    const user = config.hooks ?? {};
    const after = <T>(handlers: T | T[] | undefined): T[] => (handlers === undefined ? [] : Array.isArray(handlers) ? handlers : [handlers]);
    harness = await createHarness<string>({
      ...rest,
      eventLog: log,
      cwd: dir,
      models: { kit: pathModel(probe, () => plan.answers, (index) => plan.before(index, probe, () => harness!)) },
      tools: config.tools.map((tool) => wrapTool(tool, probe, (id) => plan.behaviours.get(id) ?? {}, tool.name === plan.timeoutTool ? TIMEOUT_MS : undefined)),
      hooks: { ...user, toolCall: [kitToolCall, ...after(user.toolCall)], toolResult: [kitToolResult, ...after(user.toolResult)] },
      ...(config.requireApproval ? { requireApproval: config.requireApproval } : {}),
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 60_000 },
      inspect,
    });
    probe.streamId = sessionStreamId(harness.id);
    let retries = 0;
    if (plan.abortOnRetry !== undefined) harness.on("retryScheduled", () => {
      if (++retries === plan.abortOnRetry) probe.abort("aborted by the path while a retry waits");
    });
    const session = harness;
    const deadline = new Promise<never>((_resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the path did not finish within ${config.timeoutMs} ms`)), config.timeoutMs);
      timer.unref?.();
    });
    const first = await Promise.race([session.prompt("go"), deadline]);
    if (plan.decide && first.status === "suspended") {
      run = 2;
      if (plan.decide === "cancelled") session.abort("cancelled by the path while the calls wait");
      else {
        for (const id of first.pendingApprovals ?? []) {
          if (plan.decide === "approved") await session.approve(id);
          else await session.deny(id, { reason: "denied by the path" });
        }
        await Promise.race([session.continue(), deadline]);
      }
    }
    if (disposed) await Promise.race([disposed, deadline]);
    else await Promise.race([session.waitForIdle(), deadline]);
    report.modelCalls = probe.modelCalls.length;
    const events: StoredEvent[] = await log.readStream(probe.streamId);
    report.events = events.length;
    // How each run ended, as the log says.
    for (const event of events) if (isEventOfType(event, "run.ended")) report.runStatuses.push(event.data.status);
    for (const event of events) if (isEventOfType(event, "tool.ended")) report.toolOutcomes[event.data.toolCallId] = event.data.outcome;

    // The kit aborts inside its own hooks (the first of each chain): should the abort still not
    // come (a hook of the harness options' own, say), that is the failure to name first.
    for (const [id, where] of plannedAborts(plan)) {
      if (probe.abortRequested) break;
      const outcome = report.toolOutcomes[id];
      const result = toolResultText(events, id);
      failures.push({
        check: "abort",
        message: `the path aborts when the kit's ${where} hook sees ${id}, but it never did: ${id} ended "${outcome ?? "(no tool.ended)"}"${result ? ` (${JSON.stringify(result)})` : ""} before, so one of your hooks blocked or threw first`,
      });
    }
    if (JSON.stringify(report.runStatuses) !== JSON.stringify(plan.expectedStatuses)) {
      const ended = events.filter((event) => isEventOfType(event, "run.ended")).map((event) => (isEventOfType(event, "run.ended") && event.data.status === "failed" && event.data.error ? `failed (${event.data.error})` : String(event.data.status)));
      failures.push({ check: "run-status", message: `the runs ended ${ended.join(", ")}; the path ends ${plan.expectedStatuses.join(", ")}` });
    }
    for (const [id, outcome] of plan.expectedOutcomes) {
      if (report.toolOutcomes[id] !== outcome) failures.push({ check: "tool-outcome", message: `tool call ${id} ended "${report.toolOutcomes[id] ?? "(no tool.ended)"}"; the path expects "${outcome}"` });
    }
    const scripted = plan.answers.length;
    if (report.modelCalls !== scripted) failures.push({ check: "model-calls", message: `the model was called ${report.modelCalls} times; the path scripts ${scripted}` });
    const candidates = [...traces.values()].filter((trace) => plan.traceOf === undefined || trace.id === `tool:${plan.traceOf}`);
    if (!candidates.some((trace) => isSubsequence(plan.states, trace.states))) {
      failures.push({ check: "states", message: `the ${plan.actor} actor did not pass through ${plan.states.join(" > ")}; it went ${candidates.map((trace) => trace.states.join(" > ")).join(" | ") || "nowhere (never started)"}` });
    }
    const pending = disposed ? [] : (await session.pendingApprovals()).map((approval) => approval.toolCallId);
    const context = { sessionId: harness.id, events, live: session.session.view, executions: probe.executions, pendingToolCallIds: pending, steps };
    await checkInvariants(join(dir, "arbor.db"), context, [...BUILT_IN_INVARIANTS, ...config.invariants], (check, message) => failures.push({ check, message }));
  } catch (error) {
    failures.push({ check: "execution", message: error instanceof Error ? error.message : String(error) });
  } finally {
    await harness?.close().catch(ignoreError("closing a path's harness after its checks; failures are already recorded"));
    await log.close().catch(ignoreError("closing a path's log after its checks; failures are already recorded"));
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length) throw new AgentTestPathError(description, steps, failures);
  return report;
}

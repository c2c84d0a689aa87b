/**
 * The abstract paths of the agent test kit: guard-aware `xstate/graph` walks over the tool-execution machine (every simple path per tool, plus gated
 * paths) and the run machine (shortest path to every state, continued with each {@link ModelAnswerKind}), offering only events a real harness can
 * produce.
 */
import { getAdjacencyMap, getShortestPaths, getSimplePaths } from "xstate/graph";
import type { AnyMachineSnapshot } from "xstate";
import type { GraphEvent as EventObject } from "./path-report.ts";
import type { AssistantMessage, ToolCall } from "../core/messages.ts";
import type { ToolExecutionMode } from "../core/tools.ts";
import { DEFAULT_RETRY_SETTINGS } from "../machines/loop-retry.ts";
import { runMachine, type RunInput } from "../machines/run.machine.ts";
import { toolExecutionMachine } from "../machines/tool-execution.machine.ts";
import type { ApprovalEndStatus } from "../core/vocabulary.ts";

/**
 * What the scripted model answers on one call: text (stop), tool calls, a length stop, a
 * provider error that is not retried (HTTP 400), a retryable one (HTTP 503, then retried).
 * @example
 * const kinds: ModelAnswerKind[] = ["toolCalls", "text"];
 */
export type ModelAnswerKind = "text" | "toolCalls" | "length" | "providerError" | "retryableError";

/**
 * Every {@link ModelAnswerKind}, in a fixed order.
 * @example
 * for (const kind of MODEL_ANSWER_KINDS) expect(paths.some((path) => path.scenario.machine === "run" && path.scenario.answers.includes(kind))).toBe(true);
 */
export const MODEL_ANSWER_KINDS: readonly ModelAnswerKind[] = ["text", "toolCalls", "length", "providerError", "retryableError"];

/** How the tool-execution path prepares the call. */
export type PrepareKind = "ready" | "gated" | "not_found" | "invalid" | "blocked";

/**
 * One tool-execution path as a scenario: one call of `tool`.
 * @example
 * const scenario: ToolScenario = { machine: "toolExecution", tool: "read", prepare: "ready", execution: "returned", end: "succeeded", final: true, states: [] };
 */
export interface ToolScenario {
  machine: "toolExecution";
  tool: string;
  /** Undefined: the path ends (or is aborted) while the call is still preparing. */
  prepare?: PrepareKind;
  execution?: "returned" | "threw" | "timed_out";
  /** The `isError` the finalize step (the `toolResult` hook) leaves, when the path gets there. */
  finalizeError?: boolean;
  abortIn?: "preparing" | "ready" | "executing" | "finalizing";
  /** The state the path ends in (a final state names the `tool.ended` outcome). */
  end: string;
  final: boolean;
  states: string[];
}

/**
 * One run path as a scenario: the model's answers in call order, the queue messages and where an abort happens.
 * @example
 * const scenario: RunScenario = { machine: "run", answers: ["toolCalls", "text"], steering: [], followUps: [], gated: false, end: "done", states: [] };
 */
export interface RunScenario {
  machine: "run";
  answers: ModelAnswerKind[];
  /** Answer indexes during whose model call a steering message is queued. */
  steering: number[];
  /** Answer indexes during whose model call a follow-up message is queued. */
  followUps: number[];
  /** Where the abort happens; `answer` is the index of the model answer it follows (or cuts); `interrupt`: the host disposes the harness instead (the run ends interrupted). */
  abort?: { in: "streaming" | "toolsPreparing" | "toolsExecuting" | "retrying"; answer: number; interrupt?: boolean };
  /** True when the tool calls of the path are gated (the run suspends for approval). */
  gated: boolean;
  /** After the suspension: the user approves or denies every waiting call, then continues (a `resume` run), or aborts (the calls are cancelled). */
  approval?: ApprovalEndStatus;
  end: "done" | "failed" | "aborted" | "interrupted" | "suspended";
  states: string[];
}

/** What the graph needs to know of the user's configuration. */
export interface GraphConfig {
  tools: { name: string; needsApproval: boolean }[];
  toolExecution: ToolExecutionMode;
}

/** One generated step: the event the machine took and the state it reached. */
export interface GraphStep {
  event: EventObject;
  state: string;
}

/** A generated path: its steps and its scenario. */
export interface GraphPath {
  steps: GraphStep[];
  scenario: ToolScenario | RunScenario;
}

const usage = { input: null, output: null, cacheRead: null, cacheWrite: null, totalTokens: null };
const assistant = (content: AssistantMessage["content"], stopReason: AssistantMessage["stopReason"]): AssistantMessage => ({
  role: "assistant",
  content,
  api: "kit",
  provider: "kit",
  model: "kit",
  usage,
  stopReason,
  timestamp: 0,
});
const abstractCall: ToolCall = { type: "toolCall", id: "c1", name: "t", arguments: {} };
const stateOf = (snapshot: AnyMachineSnapshot): string => (typeof snapshot.value === "string" ? snapshot.value : JSON.stringify(snapshot.value));
const eventData = (event: EventObject) => event as EventObject & Record<string, any>;

const TOOL_EVENTS: EventObject[] = [
  { type: "xstate.done.actor.prepare", output: { kind: "ready", args: {}, hookChanged: [] } },
  { type: "xstate.done.actor.prepare", output: { kind: "ready", args: {}, hookChanged: [], gate: { inputDigest: "d", source: "policy" } } },
  { type: "xstate.done.actor.prepare", output: { kind: "not_found", message: "not found" } },
  { type: "xstate.done.actor.prepare", output: { kind: "invalid", message: "invalid" } },
  { type: "xstate.done.actor.prepare", output: { kind: "blocked", message: "blocked" } },
  { type: "EXECUTE" },
  { type: "TOOL.RUNNING" },
  { type: "ABORT" },
  { type: "TOOL.RETURNED", result: { content: [] } },
  { type: "TOOL.THREW", message: "threw" },
  { type: "TOOL.TIMED_OUT", timeoutMs: 5 },
  { type: "xstate.done.actor.finalize", output: { result: { content: [] }, isError: false, hookChanged: [] } },
  { type: "xstate.done.actor.finalize", output: { result: { content: [] }, isError: true, hookChanged: [] } },
] as EventObject[];

/**
 * In `executing`, the tool's `execute` is called first (`TOOL.RUNNING`, a step of no state of its
 * own): an abort before it (a budget refusal, a commit) is not a path a user can drive.
 */
function offeredInExecuting(snapshot: AnyMachineSnapshot, event: EventObject): boolean {
  if (!snapshot.matches("executing")) return event.type !== "TOOL.RUNNING";
  return snapshot.context.running === true ? event.type !== "TOOL.RUNNING" : event.type === "TOOL.RUNNING";
}

function prepareKindOf(event: EventObject): PrepareKind | undefined {
  const data = eventData(event);
  if (data.type !== "xstate.done.actor.prepare") return undefined;
  return data.output.gate ? "gated" : data.output.kind;
}

/** Every simple path (or the shortest path to every state) of the tool-execution machine for one tool (see the module contract). */
export function toolPaths(tool: { name: string; needsApproval: boolean }, mode: "simple" | "shortest" = "simple"): GraphPath[] {
  const logic = toolExecutionMachine.provide({ actions: { notifyPrepared: () => {} } });
  const input = { toolCall: abstractCall, assistantMessage: assistant([abstractCall], "toolUse") };
  const paths = (mode === "simple" ? getSimplePaths : getShortestPaths)(logic, {
    input,
    events: TOOL_EVENTS,
    filterEvents: (snapshot: AnyMachineSnapshot, event: EventObject) =>
      snapshot.can(event) && offeredInExecuting(snapshot, event) && (prepareKindOf(event) !== "gated" || tool.needsApproval),
    serializeState: (snapshot: AnyMachineSnapshot) => JSON.stringify([snapshot.value, snapshot.context.outcome ?? "", snapshot.context.running === true]),
  } as never) as { steps: { event: EventObject; state: AnyMachineSnapshot }[]; state: AnyMachineSnapshot }[];
  // A path ending in `executing` before `TOOL.RUNNING` is the same scenario as the one after it.
  const distinct = paths.filter((path) => !path.state.matches("executing") || path.state.context.running === true);
  return distinct.map((path) => {
    const steps = path.steps.filter((step) => !step.event.type.startsWith("xstate.init") && step.event.type !== "TOOL.RUNNING").map((step) => ({ event: step.event, state: stateOf(step.state) }));
    const scenario: ToolScenario = { machine: "toolExecution", tool: tool.name, end: stateOf(path.state), final: path.state.status === "done", states: ["preparing", ...steps.map((step) => step.state)] };
    let before = "preparing";
    for (const step of steps) {
      const data = eventData(step.event);
      const prepare = prepareKindOf(step.event);
      if (prepare) scenario.prepare = prepare;
      else if (data.type === "ABORT") scenario.abortIn = before as ToolScenario["abortIn"];
      else if (data.type === "TOOL.RETURNED") scenario.execution = "returned";
      else if (data.type === "TOOL.THREW") scenario.execution = "threw";
      else if (data.type === "TOOL.TIMED_OUT") scenario.execution = "timed_out";
      else if (data.type === "xstate.done.actor.finalize") scenario.finalizeError = data.output.isError;
      before = step.state;
    }
    return { steps, scenario };
  });
}

const steerMessage = { role: "user" as const, content: "steer", timestamp: 0 };
const settled = (gate?: object) => ({
  toolCallId: "c1",
  toolName: "t",
  outcome: "succeeded",
  message: { role: "toolResult", toolCallId: "c1", toolName: "t", content: [], isError: false, timestamp: 0 },
  terminate: false,
  durationMs: 0,
  hooks: [],
  ...(gate ? { gate } : {}),
});
const ANSWER_EVENTS: Record<ModelAnswerKind, EventObject> = {
  text: { type: "MODEL.EVENT", event: { type: "done", message: assistant([{ type: "text", text: "hi" }], "stop") } },
  toolCalls: { type: "MODEL.EVENT", event: { type: "done", message: assistant([abstractCall], "toolUse") } },
  length: { type: "MODEL.EVENT", event: { type: "done", message: assistant([{ type: "text", text: "hi" }], "length") } },
  providerError: { type: "MODEL.EVENT", event: { type: "error", message: { ...assistant([], "error"), errorMessage: "400" }, error: { retryable: false, status: 400 } } },
  retryableError: { type: "MODEL.EVENT", event: { type: "error", message: { ...assistant([], "error"), errorMessage: "503" }, error: { retryable: true, status: 503 } } },
} as Record<ModelAnswerKind, EventObject>;
const RUN_EVENTS: EventObject[] = [
  ...Object.values(ANSWER_EVENTS),
  { type: "QUEUE.DRAINED", queue: "steering", messages: [] },
  { type: "QUEUE.DRAINED", queue: "steering", messages: [steerMessage] },
  { type: "QUEUE.DRAINED", queue: "followUp", messages: [] },
  { type: "QUEUE.DRAINED", queue: "followUp", messages: [{ ...steerMessage, content: "follow up" }] },
  { type: "TOOL.PREPARED", toolCallId: "c1" },
  { type: "xstate.done.actor.tool:c1", output: settled() },
  { type: "xstate.done.actor.tool:c1", output: settled({ inputDigest: "d", source: "policy" }) },
  { type: "xstate.after.retryDelay.run.retrying" },
  { type: "ABORT" },
  { type: "INTERRUPT", reason: "the host disposes the harness" },
] as EventObject[];

/** The answer kind of a generated model event (undefined for any other event). */
export function answerKindOf(event: EventObject): ModelAnswerKind | undefined {
  for (const kind of MODEL_ANSWER_KINDS) if (ANSWER_EVENTS[kind] === event) return kind;
  return undefined;
}

const POLL_QUEUE: Record<string, string> = { initialSteering: "steering", steering: "steering", followUp: "followUp" };

function runFilter(config: GraphConfig) {
  const gatedTools = config.tools.some((tool) => tool.needsApproval);
  const freeTools = config.tools.some((tool) => !tool.needsApproval);
  return (snapshot: AnyMachineSnapshot, event: EventObject): boolean => {
    if (!snapshot.can(event)) return false;
    const data = eventData(event);
    const state = stateOf(snapshot);
    if (answerKindOf(event) === "toolCalls" && config.tools.length === 0) return false;
    if (data.type === "QUEUE.DRAINED") {
      if (POLL_QUEUE[state] !== data.queue) return false;
      // The kit queues messages during a model call, so none waits at the initial poll; one of each per path.
      if (data.messages.length > 0 && (state === "initialSteering" || (snapshot.context.turnIndex as number) > 1)) return false;
    }
    if (data.type === "ABORT" || data.type === "INTERRUPT") return state === "streaming" || state === "retrying" || state.includes('"tools"');
    if (data.type === "xstate.done.actor.tool:c1") return data.output.gate ? gatedTools : freeTools;
    return true;
  };
}

function runSerializer(snapshot: AnyMachineSnapshot): string {
  const context = snapshot.context;
  return JSON.stringify([
    snapshot.value,
    context.stopping?.status,
    context.attempt,
    context.batch?.settledCount ?? -1,
    context.batch?.readyCount ?? -1,
    context.batch?.gatedCount ?? -1,
    context.hasMoreToolCalls,
    context.pending.length,
    Math.min(context.turnIndex, 2),
    context.assistant?.stopReason,
    context.lastAssistant?.stopReason,
  ]);
}

function runInput(config: GraphConfig): RunInput {
  return {
    runId: "kit-run",
    kind: "prompt",
    messages: [],
    prompts: [{ role: "user", content: "go", timestamp: 0 }],
    toolExecution: config.toolExecution,
    sequentialTools: [],
    retry: { ...DEFAULT_RETRY_SETTINGS, maxRetries: 1, baseDelayMs: 1, maxDelayMs: 10 },
    model: { provider: "kit", modelId: "kit", api: "kit" },
  };
}

function runScenarioOf(steps: { event: EventObject; state: AnyMachineSnapshot }[], end: AnyMachineSnapshot): RunScenario {
  const scenario: RunScenario = { machine: "run", answers: [], steering: [], followUps: [], gated: false, end: stateOf(end) as RunScenario["end"], states: [] };
  let before = steps[0]?.state;
  let prepared = false;
  for (const [index, step] of steps.entries()) {
    if (index > 0) {
      const data = eventData(step.event);
      const kind = answerKindOf(step.event);
      const last = scenario.answers.length - 1;
      if (kind) {
        scenario.answers.push(kind);
        prepared = false;
      } else if (data.type === "QUEUE.DRAINED" && data.messages.length > 0) (data.queue === "steering" ? scenario.steering : scenario.followUps).push(last);
      else if (data.type === "TOOL.PREPARED") prepared = true;
      else if (data.type === "xstate.done.actor.tool:c1" && data.output.gate) scenario.gated = true;
      else if ((data.type === "ABORT" || data.type === "INTERRUPT") && !scenario.abort) {
        const where = stateOf(before);
        scenario.abort = {
          in: where === "streaming" ? "streaming" : where === "retrying" ? "retrying" : prepared ? "toolsExecuting" : "toolsPreparing",
          answer: where === "streaming" ? last + 1 : last,
          ...(data.type === "INTERRUPT" ? { interrupt: true } : {}),
        };
      }
    }
    scenario.states.push(stateOf(step.state));
    before = step.state;
  }
  return scenario;
}

type Edge = { event: EventObject; key: string };

/** Breadth-first search over the adjacency map: the shortest edge list from `from` to a key `accept`s, over edges `allow` lets through. */
function shortest(adjacency: Map<string, { state: AnyMachineSnapshot; edges: Edge[] }>, from: string, accept: (key: string) => boolean, allow: (edge: Edge) => boolean): Edge[] | undefined {
  if (accept(from)) return [];
  const previous = new Map<string, { from: string; edge: Edge }>([[from, { from, edge: { event: { type: "" }, key: from } }]]);
  const queue = [from];
  while (queue.length) {
    const key = queue.shift()!;
    for (const edge of adjacency.get(key)?.edges ?? []) {
      if (previous.has(edge.key) || !allow(edge)) continue;
      previous.set(edge.key, { from: key, edge });
      if (accept(edge.key)) {
        const path: Edge[] = [];
        for (let at = edge.key; at !== from; at = previous.get(at)!.from) path.unshift(previous.get(at)!.edge);
        return path;
      }
      queue.push(edge.key);
    }
  }
  return undefined;
}

/** The run paths (see the module contract): the shortest path to every state, each combined with every model-answer kind that can come next. */
export function runPaths(config: GraphConfig): GraphPath[] {
  const logic = runMachine.provide({ actions: { drain: () => {} } });
  const options = { input: runInput(config), events: RUN_EVENTS, limit: 50_000, filterEvents: runFilter(config), serializeState: runSerializer };
  const raw = getAdjacencyMap(logic, options as never) as unknown as Record<string, { state: AnyMachineSnapshot; transitions: Record<string, { event: EventObject; state: AnyMachineSnapshot }> }>;
  const adjacency = new Map<string, { state: AnyMachineSnapshot; edges: Edge[] }>();
  for (const [key, value] of Object.entries(raw)) {
    adjacency.set(key, { state: value.state, edges: Object.values(value.transitions).map((transition) => ({ event: transition.event, key: runSerializer(transition.state) })) });
  }
  // The traversal starts at the initial state, so it is the map's first key.
  const initial = Object.keys(raw)[0];
  const stateAt = (key: string) => adjacency.get(key)!.state;
  const isFinal = (key: string) => adjacency.get(key)?.state.status === "done";
  const isDone = (key: string) => isFinal(key) && stateOf(stateAt(key)) === "done";
  const noAbort = (edge: Edge) => edge.event.type !== "ABORT" && edge.event.type !== "INTERRUPT";
  const noAnswer = (edge: Edge) => answerKindOf(edge.event) === undefined;

  // The shortest path to every state value (in the tools state: with the batch gated or not, prepared or not).
  const byState = new Map<string, Edge[]>();
  const tree = new Map<string, Edge[]>([[initial, []]]);
  for (const queue = [initial]; queue.length; ) {
    const key = queue.shift()!;
    for (const edge of adjacency.get(key)?.edges ?? []) {
      if (tree.has(edge.key)) continue;
      tree.set(edge.key, [...tree.get(key)!, edge]);
      queue.push(edge.key);
    }
  }
  for (const [key, path] of tree) {
    const state = stateAt(key);
    const batch = state.context.batch;
    const group = JSON.stringify([stateOf(state), batch ? [batch.gatedCount > 0, batch.readyCount, path.at(-1)?.event.type] : null]);
    const known = byState.get(group);
    if (!known || path.length < known.length) byState.set(group, path);
  }
  const result: GraphPath[] = [];
  const seen = new Set<string>();
  const add = (edges: Edge[]) => {
    const steps = [{ event: { type: "xstate.init" } as EventObject, state: stateAt(initial) }, ...edges.map((edge) => ({ event: edge.event, state: stateAt(edge.key) }))];
    const scenario = runScenarioOf(steps, steps.at(-1)!.state);
    const key = JSON.stringify([scenario.answers, scenario.steering, scenario.followUps, scenario.abort, scenario.gated, scenario.end]);
    if (seen.has(key)) return;
    seen.add(key);
    result.push({ steps: steps.slice(1).map((step) => ({ event: step.event, state: stateOf(step.state) })), scenario });
  };
  for (const prefix of byState.values()) {
    const end = prefix.at(-1)?.key ?? initial;
    if (isFinal(end)) {
      add(prefix);
      continue;
    }
    // No answer at all: an abort, an interrupt, or a suspension.
    for (const without of ["INTERRUPT", "ABORT"]) {
      const stop = shortest(adjacency, end, isFinal, (edge) => noAnswer(edge) && edge.event.type !== without);
      if (stop) add([...prefix, ...stop]);
    }
    for (const kind of MODEL_ANSWER_KINDS) {
      const toStreaming = shortest(adjacency, end, (key) => stateOf(stateAt(key)) === "streaming", (edge) => noAbort(edge) && noAnswer(edge));
      if (!toStreaming) continue;
      const at = toStreaming.at(-1)?.key ?? end;
      const answer = adjacency.get(at)!.edges.find((edge) => answerKindOf(edge.event) === kind);
      if (!answer) continue;
      // The shortest completion that ends done, else one without an abort (aborts have their own continuation above).
      const completion = shortest(adjacency, answer.key, isDone, noAbort) ?? shortest(adjacency, answer.key, isFinal, noAbort) ?? shortest(adjacency, answer.key, isFinal, () => true);
      if (completion) add([...prefix, ...toStreaming, answer, ...completion]);
    }
  }
  // The approval states: each suspension decided both ways, then continued (the model then answers text).
  for (const path of [...result]) {
    const scenario = path.scenario as RunScenario;
    if (scenario.end !== "suspended") continue;
    for (const approval of ["approved", "denied"] as const) {
      result.push({
        steps: [...path.steps, { event: { type: "kit.approval", decision: approval } as EventObject, state: "tools" }, { event: ANSWER_EVENTS.text, state: "done" }],
        scenario: { ...scenario, approval, answers: [...scenario.answers, "text"], end: "done", states: [...scenario.states] },
      });
    }
    result.push({
      steps: [...path.steps, { event: { type: "kit.approval", decision: "cancelled" } as EventObject, state: "aborted" }],
      scenario: { ...scenario, approval: "cancelled", end: "aborted", states: [...scenario.states] },
    });
  }
  return result;
}

/**
 * Readable paths (numbered steps, "what happened → the state it led to") and {@link AgentTestPathError} (`AGENT_TEST_PATH_FAILED`), whose message
 * lists the steps and failed checks and whose `details` hold them as data.
 */
/**
 * An event of a generated path, as the machines took it (an xstate event object). Declared here
 * so that the testing entry's public types never load xstate's declarations.
 */
export interface GraphEvent {
  type: string;
}
type EventObject = GraphEvent;
import { ArborError } from "../core/errors.ts";
import type { GraphStep, ModelAnswerKind } from "./path-graph.ts";

/**
 * One failed check of a path: the expectation (`outcome`, `states`, `model-calls`) or invariant name, and what went wrong.
 * @example
 * const failure: PathFailure = { check: "calls-paired", message: "tool call c1 has 0 results" };
 */
export interface PathFailure {
  check: string;
  message: string;
}

/**
 * A path that did not hold: its description, its steps (readable) and its failures. Thrown by `AgentTestPath.test()`.
 * @example
 * try { await path.test(); } catch (error) { if (AgentTestPathError.isInstance(error)) console.log(error.details.steps); }
 */
export class AgentTestPathError extends ArborError {
  static readonly code = "AGENT_TEST_PATH_FAILED";
  declare readonly details: { path: string; steps: string[]; failures: PathFailure[] };
  constructor(path: string, steps: string[], failures: PathFailure[]) {
    super(
      AgentTestPathError.code,
      [`The path "${path}" failed:`, ...steps.map((step, index) => `  ${index + 1}. ${step}`), "What went wrong:", ...failures.map((failure) => `  - [${failure.check}] ${failure.message}`)].join("\n"),
      { details: { path, steps, failures } },
    );
  }
  static override isInstance(error: unknown): error is AgentTestPathError {
    return ArborError.isInstance(error) && error.code === AgentTestPathError.code;
  }
}

const ANSWER_TEXT: Record<ModelAnswerKind, string> = {
  text: "the model answers with text",
  toolCalls: "the model answers with tool calls",
  length: "the model stops at its length limit",
  providerError: "the provider fails (HTTP 400, not retried)",
  retryableError: "the provider fails (HTTP 503, retryable)",
};

/** One step's words (without the state). */
export function describeEvent(event: EventObject, answer: ModelAnswerKind | undefined, tool?: string): string {
  const data = event as EventObject & Record<string, any>;
  if (answer) return ANSWER_TEXT[answer];
  switch (data.type) {
    case "xstate.done.actor.prepare":
      return data.output.gate
        ? `${tool} needs approval`
        : data.output.kind === "ready"
          ? `the call of ${tool} is prepared`
          : data.output.kind === "not_found"
            ? "the model calls a tool that does not exist"
            : data.output.kind === "invalid"
              ? `the model calls ${tool} with invalid arguments`
              : `a toolCall hook blocks ${tool}`;
    case "EXECUTE":
      return `${tool ?? "the tool"} starts`;
    case "ABORT":
      return "the user aborts";
    case "TOOL.RETURNED":
      return `${tool} returns`;
    case "TOOL.THREW":
      return `${tool} throws`;
    case "TOOL.TIMED_OUT":
      return `${tool} times out`;
    case "xstate.done.actor.finalize":
      return data.output.isError ? "the toolResult step marks the result an error" : "the toolResult step keeps the result a success";
    case "QUEUE.DRAINED":
      return data.messages.length ? `a ${data.queue === "steering" ? "steering" : "follow-up"} message is delivered` : `the ${data.queue === "steering" ? "steering" : "follow-up"} queue is empty`;
    case "TOOL.PREPARED":
      return "the tool calls are prepared";
    case "xstate.done.actor.tool:c1":
      return data.output.gate ? "a call waits for approval" : "the tool calls succeed";
    case "kit.approval":
      return data.decision === "cancelled" ? "the user aborts while the calls wait (they are cancelled)" : `the user ${data.decision === "approved" ? "approves" : "denies"} the waiting calls and continues`;
    case "INTERRUPT":
      return "the host disposes the harness (interrupt)";
    case "xstate.after.retryDelay.run.retrying":
      return "the retry delay elapses";
    default:
      return data.type;
  }
}

/** The readable steps of a generated path. */
export function describeSteps(steps: GraphStep[], answerOf: (event: EventObject) => ModelAnswerKind | undefined, tool?: string): string[] {
  return steps.map((step) => `${describeEvent(step.event, answerOf(step.event), tool)} → ${step.state}`);
}

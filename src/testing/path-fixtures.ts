/**
 * What a path makes of the user's harness: a scripted model from the path's answers, the user's tools wrapped to record (and where the path says,
 * replace) their executions, and the kit's hooks, placed first in each chain so a user hook cannot keep the path's abort, block or error away.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider";
import type { AgentTool } from "../core/tools.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType } from "../store/events/catalogue.ts";
import type { ScriptedTurn } from "./openai-wire.ts";
import { scriptedModel, type ScriptedStep } from "./scripted-model.ts";

/** One execution of a user's tool (or its stand-in) seen by the kit. */
export interface ToolExecutionRecord {
  toolCallId: string;
  toolName: string;
  /** True when the kit had asked for an abort before this execution started. */
  afterAbort: boolean;
  /** True when the call's `tool.started` was in the log when the execution started. */
  startCommitted: boolean;
  /** True when the user's own `execute` ran (false for a stand-in that threw or hung). */
  real: boolean;
}

/** How the path wants one call of a wrapped tool to behave. */
export interface ToolBehaviour {
  execution?: "returned" | "threw" | "timed_out";
  /** Ask for an abort as the execution starts (the user's tool still runs, with its signal aborted). */
  abortOnStart?: boolean;
}

/** The mutable state of one path's execution, shared by the model, the tools and the hooks. */
export interface PathProbe {
  log: EventLog;
  streamId: string;
  abortRequested: boolean;
  executions: ToolExecutionRecord[];
  modelCalls: LanguageModelV4CallOptions[];
  abort: (reason: string) => void;
}

/** Error a scripted model call rejects with; `statusCode` makes the adapter classify it like an HTTP failure. */
export function httpError(status: number, message: string, responseHeaders?: Record<string, string>): Error {
  return Object.assign(new Error(`${status} ${message}`), { statusCode: status, ...(responseHeaders ? { responseHeaders } : {}) });
}

/** A `ScriptedTurn` of text, tool calls or a length stop. */
export type PathAnswer = ScriptedTurn | Error | "hang";

/**
 * The scripted model of a path: call `i` runs `before(i)` (queue messages, ask for an abort),
 * then answers `answers[i]`; a call past the script rejects, naming the call.
 */
export function pathModel(probe: PathProbe, answers: () => PathAnswer[], before: (index: number) => void): LanguageModelV4 {
  return {
    specificationVersion: "v4",
    provider: "arbor.kit",
    modelId: "kit-model",
    supportedUrls: {},
    doGenerate: async () => {
      throw new Error("the agent test model only streams");
    },
    doStream: async (options) => {
      const index = probe.modelCalls.length;
      probe.modelCalls.push(options);
      before(index);
      const answer = answers()[index];
      if (answer === undefined) throw new Error(`the path scripts ${answers().length} model calls; call #${index + 1} is one too many`);
      const step: ScriptedStep = answer;
      return scriptedModel([step]).doStream(options);
    },
  };
}

const never = () => new Promise<never>(() => {});

/** The user's tool wrapped for a path (see the module contract). */
export function wrapTool(tool: AgentTool<any, any, any>, probe: PathProbe, behaviourOf: (toolCallId: string) => ToolBehaviour, timeoutMs?: number): AgentTool<any, any, any> {
  return {
    ...tool,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    async execute(args, context) {
      const toolCallId = context.toolCallId;
      const behaviour = behaviourOf(toolCallId);
      const afterAbort = probe.abortRequested;
      const stored = await probe.log.readStream(probe.streamId);
      const startCommitted = stored.some((event) => isEventOfType(event, "tool.started") && event.data.toolCallId === toolCallId);
      const real = behaviour.execution !== "threw" && behaviour.execution !== "timed_out";
      probe.executions.push({ toolCallId, toolName: tool.name, afterAbort, startCommitted, real });
      if (behaviour.abortOnStart) probe.abort("aborted by the path while the tool runs");
      if (behaviour.execution === "threw") throw new Error(`the path makes ${tool.name} throw`);
      if (behaviour.execution === "timed_out") {
        await new Promise((_resolve, reject) => context.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
        return never();
      }
      return tool.execute(args, context);
    },
  };
}

/** A promise that never settles: a hook that waits for the abort that stops its actor. */
export function hold(): Promise<never> {
  return never();
}

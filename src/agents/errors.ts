/**
 * The typed errors of `defineAgent` agents: `AgentDefinitionError` and `AgentInputError` (thrown, naming the field; input errors before anything is
 * logged); `AgentOutputError` and `AgentRunError` are never thrown, they are the `error` of a failed {@link AgentOutcome}.
 */
import type { z } from "zod";
import { ArborError } from "../core/errors.ts";

/** One failing field: its dotted path (`"(root)"` for the value) and zod's message. */
export interface AgentIssue {
  path: string;
  message: string;
}

/** The issues of a zod error, one per failing field, in zod's order. */
export function issuesOf(error: z.ZodError): AgentIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.length ? issue.path.map(String).join(".") : "(root)", message: issue.message }));
}

/** The issues as one line: `path: message; path: message`. */
export function formatIssues(issues: readonly AgentIssue[]): string {
  return issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
}

/**
 * A bad `defineAgent` definition; the message names the field (code `AGENT_DEFINITION_INVALID`).
 * @example
 * try { defineAgent({ name: "", instructions: "…", model }); }
 * catch (error) { if (AgentDefinitionError.isInstance(error)) console.error(error.field, error.message); }
 */
export class AgentDefinitionError extends ArborError {
  static readonly code = "AGENT_DEFINITION_INVALID";
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(AgentDefinitionError.code, message, { details: { field } });
  }
  static override isInstance(error: unknown): error is AgentDefinitionError {
    return ArborError.isInstance(error) && error.code === AgentDefinitionError.code;
  }
}

/**
 * Input that fails the agent's `input` schema (code `AGENT_INPUT_INVALID`). Nothing was logged.
 * @example
 * await agent.run({ city: 42 }, { harness }).catch((error) => {
 *   if (AgentInputError.isInstance(error)) console.error(error.path); // "city"
 * });
 */
export class AgentInputError extends ArborError {
  static readonly code = "AGENT_INPUT_INVALID";
  /** The first failing field's dotted path, `"(root)"` for the value itself. */
  readonly path: string;
  constructor(
    readonly agent: string,
    readonly issues: AgentIssue[],
  ) {
    super(AgentInputError.code, `Invalid input for agent "${agent}": ${formatIssues(issues)}`, { details: { agent, path: issues[0]?.path ?? "(root)", issues } });
    this.path = issues[0]?.path ?? "(root)";
  }
  static override isInstance(error: unknown): error is AgentInputError {
    return ArborError.isInstance(error) && error.code === AgentInputError.code;
  }
}

/**
 * The model's final answer still failed the `output` schema after `repairs` repair rounds (code `AGENT_OUTPUT_INVALID`).
 * @example
 * if (AgentOutputError.isInstance(error)) console.error(`${error.repairs} repairs were not enough:`, error.issues);
 */
export class AgentOutputError extends ArborError {
  static readonly code = "AGENT_OUTPUT_INVALID";
  constructor(
    readonly agent: string,
    readonly issues: AgentIssue[],
    readonly repairs: number,
    /** The message as recorded (an outcome rebuilt from `agent.ended`); default: built from the issues. */
    message?: string,
  ) {
    super(AgentOutputError.code, message ?? `Agent "${agent}" gave no valid output after ${repairs} repair round(s): ${formatIssues(issues)}`, { details: { agent, issues, repairs } });
  }
  static override isInstance(error: unknown): error is AgentOutputError {
    return ArborError.isInstance(error) && error.code === AgentOutputError.code;
  }
}

/**
 * The agent's run did not end `done` (code `AGENT_RUN_FAILED`); `status` says how, `runCode` is the run's own code, if any.
 * @example
 * if (AgentRunError.isInstance(error)) console.error(error.status, error.runCode);
 */
export class AgentRunError extends ArborError {
  static readonly code = "AGENT_RUN_FAILED";
  constructor(
    readonly agent: string,
    readonly status: "failed" | "aborted" | "interrupted",
    message: string,
    readonly runCode?: string,
  ) {
    super(AgentRunError.code, `Agent "${agent}" run ${status}: ${message}`, { details: { agent, status, ...(runCode !== undefined ? { runCode } : {}) } });
  }
  static override isInstance(error: unknown): error is AgentRunError {
    return ArborError.isInstance(error) && error.code === AgentRunError.code;
  }
}

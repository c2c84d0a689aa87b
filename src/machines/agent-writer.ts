/**
 * The agent's session writer, created on first use, and its replacement after a refused write (a poisoned writer stays poisoned; `reload()` starts
 * a fresh one). {@link writerFailureMessage} and {@link runOutcome} describe a run the log refused.
 */
import { ArborError } from "../core/errors.ts";
import type { RunOutcome } from "./agent-types.ts";
import { errorMessageOf } from "./loop-messages.ts";
import type { RunOutput } from "./run.machine.ts";
import type { SessionWriter } from "./session-writer.ts";

/** The agent's current session writer (see the module contract). */
export class AgentWriter {
  #create: () => SessionWriter;
  #writer: SessionWriter | undefined;

  constructor(create: () => SessionWriter) {
    this.#create = create;
  }

  /** The current writer (created now if there is none). */
  get now(): SessionWriter {
    return (this.#writer ??= this.#create());
  }

  /** The current writer if one was created. */
  get created(): SessionWriter | undefined {
    return this.#writer;
  }

  /** Starts a fresh writer in place of a poisoned one. */
  replace(): void {
    this.#writer = this.#create();
  }
}

/** The error message of a run whose write the log refused. */
export function writerFailureMessage(error: unknown): string {
  return (
    `The session log refused a write, so the run stopped and wrote nothing more: ${errorMessageOf(error)} ` +
    "Nothing is retried automatically: the session reloads from the log at the next prompt() or continue() (or call reload() now); send the prompt again if it is still wanted."
  );
}

/** The outcome of a run as its callers get it, once its writes are flushed (`failure`: the writer's, if the log refused one of them). */
export function runOutcome(output: RunOutput, failure: unknown): RunOutcome {
  const refused = failure !== undefined;
  const outcome: RunOutcome = { runId: output.runId, status: refused ? "failed" : output.status, messages: output.messages };
  if (output.pendingApprovals) outcome.pendingApprovals = output.pendingApprovals;
  if (output.lastAssistant) outcome.lastAssistant = output.lastAssistant;
  const error = refused ? writerFailureMessage(failure) : output.error;
  if (error) outcome.error = error;
  const code = refused && ArborError.isInstance(failure) ? failure.code : output.code;
  if (code) outcome.code = code;
  if (output.budget && !refused) outcome.budget = output.budget;
  return outcome;
}

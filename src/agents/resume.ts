/**
 * What an agent's session already holds of its invocation, for `agent.run(..., { resumeSession })`: `agent.started`/`agent.ended`, the last run and
 * message, and the totals so far, read after crash recovery. {@link endedOutcome} rebuilds a recorded outcome (typed errors keep their code).
 */
import { addEntryToAnswerTotals, emptyAnswerTotals, type AnswerTotals } from "../core/agent-answer.ts";
import { isKnownEntry } from "../core/entries.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { EventLog } from "../store/event-log.ts";
import { isEventOfType, type ArborEventData } from "../store/events/catalogue.ts";
import { sessionStreamId } from "../store/events/session-events.ts";
import { AgentOutputError, AgentRunError } from "./errors.ts";

/** The invocation's traces in its session. */
export interface PriorInvocation {
  started?: ArborEventData<"agent.started">;
  ended?: ArborEventData<"agent.ended">;
  lastRunId?: string;
  lastMessage?: AgentMessage;
  /** Repairs and usage of the invocation's logged messages (zeros before `agent.started`). */
  totals: AnswerTotals;
}

/** Reads `sessionId`'s invocation traces (see the module contract). */
export async function priorInvocation(log: EventLog, sessionId: string): Promise<PriorInvocation> {
  const prior: PriorInvocation = { totals: emptyAnswerTotals() };
  for (const event of await log.readStream(sessionStreamId(sessionId))) {
    if (isEventOfType(event, "agent.started")) prior.started = event.data;
    else if (isEventOfType(event, "agent.ended")) prior.ended = event.data;
    else if (isEventOfType(event, "run.started")) prior.lastRunId = event.data.runId;
    else if (isEventOfType(event, "entry.appended")) {
      const { entry } = event.data;
      if (prior.started) prior.totals = addEntryToAnswerTotals(prior.totals, entry);
      if (isKnownEntry(entry) && entry.type === "message") prior.lastMessage = entry.message;
    }
  }
  return prior;
}

/** The outcome an `agent.ended` recorded. */
export function endedOutcome(ended: ArborEventData<"agent.ended">, sessionId: string) {
  const base = { agent: ended.agent, sessionId, invocationId: ended.invocationId, repairs: ended.repairs, usage: ended.usage };
  if (ended.status === "done") return { ...base, status: "done" as const, runId: ended.runId, output: ended.output };
  // The recorded text is the error's whole message: rebuilt errors get it back as it was, not with a second `Agent "x" …:` prefix.
  const error =
    ended.status === "failed" && ended.code === AgentOutputError.code
      ? new AgentOutputError(ended.agent, [{ path: "(root)", message: unprefixed(ended.error, `Agent "${ended.agent}" gave no valid output after ${ended.repairs} repair round(s): `) }], ended.repairs, ended.error)
      : new AgentRunError(ended.agent, ended.status === "failed" ? "failed" : ended.status, unprefixed(ended.status === "failed" ? ended.error : (ended.reason ?? ended.status), `Agent "${ended.agent}" run ${ended.status}: `));
  return { ...base, status: ended.status, runId: ended.runId, error };
}

/** `text` without `prefix` when it starts with it. */
function unprefixed(text: string, prefix: string): string {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

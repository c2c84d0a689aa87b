/**
 * `replayRun`: re-executes a logged run (or a session's runs) against today's code with {@link replayModel}, in a scratch in-memory session seeded
 * with the branch before the run (the log is only read), and reports whether the requests stay identical. Aborted calls are aborted again; tools
 * return their recorded results unless real ones are given; `resume` runs are refused (`REPLAY_UNSUPPORTED`).
 */
import type { AgentTool } from "../core/tools.ts";
import type { JsonSchemaTool } from "../adapters/tools/tool-schema.ts";
import { createHarness } from "../harness/create-harness.ts";
import type { HarnessHooks } from "../harness/hook-types.ts";
import type { AgentHarnessOptions } from "../harness/options.ts";
import { createMemoryEventLog } from "../store/in-memory/memory-event-log.ts";
import { createSessionRepository } from "../store/session-repository.ts";
import type { EventLog } from "../store/event-log.ts";
import { replayModel, type ReplayReport } from "./replay-model.ts";
import { ReplayError, type RecordedSession } from "./replay-record.ts";

/**
 * Options of {@link replayRun}.
 * @example
 * const options: ReplayRunOptions = { runId: "run-1", tools: [readTool], hooks: { toolCall: guard } };
 */
export interface ReplayRunOptions {
  runId?: string;
  /** The tools to run the calls with, or `"recorded"` (default): stand-ins returning the recorded results. */
  tools?: (AgentTool<any, any, any> | JsonSchemaTool<any>)[] | "recorded";
  hooks?: HarnessHooks;
  /** More harness options (system prompt, approval policy, ...); the kit sets the log, session and model. */
  harness?: Partial<Omit<AgentHarnessOptions, "tools" | "hooks" | "models" | "eventLog" | "eventLogPath" | "session" | "repository" | "sessionId">>;
}

/** Stand-ins for every tool the recorded run called, each returning the recorded result of its call id. */
function recordedTools(recorded: RecordedSession): JsonSchemaTool<any>[] {
  const names = new Set<string>();
  for (const segment of recorded.segments) {
    for (const call of segment.calls) {
      const turn = call.answer as { toolCalls?: { name: string }[]; hangAfter?: { toolCalls?: { name: string }[] } };
      for (const toolCall of turn.toolCalls ?? turn.hangAfter?.toolCalls ?? []) names.add(toolCall.name);
    }
  }
  return [...names].map((name) => ({
    name,
    description: `${name} (the recorded results)`,
    parameters: { type: "object" },
    async execute(_args: unknown, context: { toolCallId: string }) {
      const result = recorded.toolResults.get(context.toolCallId);
      if (!result) throw new Error(`no result of ${name} was recorded for call ${context.toolCallId}`);
      if (result.isError) throw new Error(result.content.map((block) => (block.type === "text" ? block.text : "")).join(""));
      return { content: result.content, ...(result.details !== undefined ? { details: result.details } : {}) };
    },
  }));
}

/**
 * Re-executes the recorded run(s) of `sessionId` (see the module contract). Rejects with ReplayError (`REPLAY_RUN_NOT_FOUND`,
 * `REPLAY_NOTHING_RECORDED`, `REPLAY_UNSUPPORTED`) and SessionNotFoundError.
 * @example
 * const report = await replayRun(log, sessionId); // recorded tools: checks the loop and hooks of today
 * report.identical; // true
 */
export async function replayRun(log: EventLog, sessionId: string, options: ReplayRunOptions = {}): Promise<ReplayReport> {
  // A recorded abort is repeated: the run is aborted when the model reaches the aborted answer.
  let abort = () => {};
  const model = await replayModel(log, sessionId, options.runId, { onAbortedAnswer: () => abort() });
  const recorded = model.recorded;
  const unsupported = recorded.segments.find((segment) => segment.kind === "resume");
  if (unsupported) throw new ReplayError("REPLAY_UNSUPPORTED", `Run ${unsupported.runId} resumes after approvals; replaying a resume run is not supported (replay the run before it).`, { details: { runId: unsupported.runId } });
  const scratch = createSessionRepository({ log: createMemoryEventLog() });
  const base = recorded.session.view.getBranch(recorded.segments[0].baseLeafId);
  const session = await scratch.importEntries({ entries: recorded.segments[0].baseLeafId === null ? [] : base, cwd: recorded.session.view.info.cwd ?? process.cwd() });
  const harness = await createHarness<string>({
    ...(options.harness ?? {}),
    repository: scratch,
    sessionId: session.id,
    models: { replay: model },
    tools: options.tools === undefined || options.tools === "recorded" ? recordedTools(recorded) : options.tools,
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });
  abort = () => harness.abort("aborted as in the recorded run");
  try {
    for (const segment of recorded.segments) {
      if (segment.kind === "continue" || segment.prompts.length === 0) await harness.continue();
      else await harness.prompt(segment.prompts);
    }
    await harness.waitForIdle();
    return model.report();
  } finally {
    await harness.close();
  }
}

/**
 * `defineAgent`: a typed agent (zod input and output), and `agent.run(input, { harness })`: one invocation in its own session. The definition is
 * checked at once (`AgentDefinitionError`); `run` validates the input first (`AgentInputError`, nothing logged), then logs `agent.started`, prompts
 * once and gets the final answer in ONE run (`structured-output.ts`), logs `agent.ended` and resolves with an {@link AgentOutcome} (errors are
 * data; `suspended` resumes with `agent.resume`). The harness is passed per call so the definition carries the types.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { addToAnswerTotals, emptyAnswerTotals, type AnswerTotals, type AnswerUsage } from "../core/agent-answer.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { AgentTool } from "../core/tools.ts";
import type { AgentHarness } from "../harness/create-harness.ts";
import type { HarnessSession } from "../harness/harness-session-types.ts";
import type { RunOutcome } from "../machines/agent-types.ts";
import type { ArborEventData } from "../store/events/catalogue.ts";
import { InvalidArgumentError } from "../core/errors.ts";
import { AgentDefinitionError, AgentInputError, AgentOutputError, AgentRunError, issuesOf } from "./errors.ts";
import { endedOutcome, priorInvocation } from "./resume.ts";
import { createAnswerJudge, FINAL_ANSWER_TOOL, finalAnswerTool, judgedModel, judgeMessage, planOutput, type OutputMode, type OutputPlan } from "./structured-output.ts";

/**
 * A typed agent's definition.
 * @example
 * const options: DefineAgentOptions<z.ZodString, z.ZodObject<{ n: z.ZodNumber }>> = { name: "count", instructions: "Count.", output: z.object({ n: z.number() }) };
 */
export interface DefineAgentOptions<Input extends z.ZodType = z.ZodString, Output extends z.ZodType | undefined = undefined, ModelName extends string = string> {
  /** `[A-Za-z][A-Za-z0-9_-]*`, at most 64 characters; in events and the session's metadata. */
  name: string;
  /** The system prompt, or a function of the validated input returning it. */
  instructions: string | ((input: z.output<Input>) => string);
  /**
   * A model client, or a model name of the harness's registry (a literal name is checked at compile
   * time against the models of the harness `run` is given). Default: the harness's current model.
   */
  model?: ModelClient | ModelName;
  tools?: AgentTool<any, any, any>[];
  /** The input schema; default `z.string()`. */
  input?: Input;
  /** The output schema; without one the output is the final answer's text. */
  output?: Output;
  /** Repair rounds after an invalid answer (default 2; 0 = none). */
  maxRepairs?: number;
  /** `auto` (default): `native` when the model's `structuredOutput` is true, else `tool`. */
  outputMode?: "auto" | "native" | "tool";
  /** The prompt text of the input (default: a string as is, anything else as JSON). */
  prompt?: (input: z.output<Input>) => string;
}

/** The output type of an agent: the output schema's, or `string` without one. */
export type AgentOutputOf<Output extends z.ZodType | undefined> = Output extends z.ZodType ? z.output<Output> : string;

/**
 * Token totals of one invocation (tokens; `cost` in $ when the model's prices are known): the
 * activity projection's fold of the invocation's messages over all its runs (ours).
 * @example
 * const usage: AgentUsage = { input: 120, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 160 };
 */
export type AgentUsage = AnswerUsage;

/** Fields of every outcome. */
export interface AgentOutcomeBase {
  agent: string;
  /** The agent's own session (its log holds every step). */
  sessionId: string;
  invocationId: string;
  /** Repair rounds sent to the model. */
  repairs: number;
  usage: AgentUsage;
}

/**
 * How an invocation ended: the typed output, or a typed error (discriminated by `status`).
 * @example
 * if (outcome.status === "done") use(outcome.output); else console.error(outcome.error.code);
 */
export type AgentOutcome<Output> =
  | (AgentOutcomeBase & { status: "done"; runId: string; output: Output })
  | (AgentOutcomeBase & { status: "failed" | "aborted" | "interrupted"; runId: string | undefined; error: AgentOutputError | AgentRunError })
  | AgentSuspendedOutcome;

/**
 * An invocation that stopped for tool approval (ours): its run ended `suspended` and the calls wait in the agent's session (`sessionId`). Not an
 * ending: `agent.ended` is not logged yet. Decide each call (`harness.openSession(sessionId)` then `approve` / `deny`, or `arbor approve <session>
 * <callId>`), then `agent.resume(sessionId, { harness })`.
 * @example
 * if (outcome.status === "suspended") console.log(`approve ${outcome.pendingApprovals.join(", ")} in session ${outcome.sessionId}`);
 */
export interface AgentSuspendedOutcome extends AgentOutcomeBase {
  status: "suspended";
  /** The suspended run. */
  runId: string;
  /** The tool calls still waiting for a decision, in call order. */
  pendingApprovals: string[];
}

/**
 * Options of `agent.run`.
 * @example
 * await agent.run(input, { harness, signal: AbortSignal.timeout(60_000), metadata: { workflow: "w-1" } });
 */
export interface AgentRunOptions<HarnessModel extends string = string> {
  /** The harness whose storage, models, hooks and secrets the invocation uses. */
  harness: AgentHarness<HarnessModel>;
  signal?: AbortSignal;
  /** Joins `{ agent: name }` in the session's metadata (e.g. the workflow that runs it). */
  metadata?: Record<string, unknown>;
  /** The session's working directory; default the harness's. */
  cwd?: string;
  /** Called (and awaited) with the invocation's session id once it exists, before anything runs in it (a workflow logs it to resume there). */
  onSession?: (sessionId: string) => void | Promise<void>;
  /**
   * Goes on with the invocation in this session (of this agent) instead of starting one: after the session's crash recovery, a logged `agent.ended`
   * is the outcome as recorded; a complete final answer is judged; otherwise the run continues from its context (tool calls that ran are not run
   * again). Ours (workflow agent steps).
   */
  resumeSession?: string;
}

/**
 * A defined agent.
 * @example
 * const outcome = await triage.run({ title: "Crash" }, { harness });
 */
export interface TypedAgent<Input extends z.ZodType = z.ZodString, Output extends z.ZodType | undefined = undefined, ModelName extends string = string> {
  readonly name: string;
  readonly definition: Readonly<DefineAgentOptions<Input, Output, ModelName>>;
  /**
   * Runs one invocation (see the module contract).
   * @throws (rejects) AgentInputError for input that fails the input schema (nothing logged).
   */
  run<HarnessModel extends string>(input: z.input<Input>, options: AgentRunOptions<HarnessModel> & ModelOfHarness<ModelName, HarnessModel>): Promise<AgentOutcome<AgentOutputOf<Output>>>;
  /**
   * Goes on with an invocation of this agent in its session `sessionId` (a `suspended` outcome's, or one a crash cut off), in this process or
   * another: the input is the one its `agent.started` recorded. Resolves with the outcome as `run` does: `suspended` again while a call still waits
   * for a decision; an invocation that already ended gives its recorded outcome.
   * @throws (rejects) InvalidArgumentError when the harness has no repository, or the session holds no invocation of this agent.
   */
  resume<HarnessModel extends string>(
    sessionId: string,
    options: Omit<AgentRunOptions<HarnessModel>, "resumeSession"> & ModelOfHarness<ModelName, HarnessModel>,
  ): Promise<AgentOutcome<AgentOutputOf<Output>>>;
}

/**
 * The compile-time check of an agent's model name against the harness's: nothing when the name is
 * one of the harness's models (or either is a plain `string`), else a `harness` the given one cannot be.
 */
type ModelOfHarness<ModelName extends string, HarnessModel extends string> = string extends ModelName
  ? unknown
  : string extends HarnessModel
    ? unknown
    : [ModelName] extends [HarnessModel]
      ? unknown
      : { harness: { "the agent's model is not one of the harness's models": ModelName } };

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function check(options: DefineAgentOptions<z.ZodType, z.ZodType | undefined>): void {
  const fail = (field: string, what: string) => {
    throw new AgentDefinitionError(`Invalid agent option "${field}": ${what}`, field);
  };
  if (typeof options !== "object" || options === null) fail("(root)", "expected an object");
  if (typeof options.name !== "string" || !NAME.test(options.name)) fail("name", `${JSON.stringify(options.name)} is not a name ([A-Za-z][A-Za-z0-9_-]*, at most 64 characters)`);
  if (typeof options.instructions !== "string" && typeof options.instructions !== "function") fail("instructions", "expected a string or a function");
  if (options.maxRepairs !== undefined && (!Number.isInteger(options.maxRepairs) || options.maxRepairs < 0)) fail("maxRepairs", `expected a non-negative integer, got ${String(options.maxRepairs)}`);
  if (options.outputMode !== undefined && !["auto", "native", "tool"].includes(options.outputMode)) fail("outputMode", `expected "auto", "native" or "tool", got ${JSON.stringify(options.outputMode)}`);
  for (const field of ["input", "output"] as const) {
    const schema = options[field];
    if (schema !== undefined && typeof (schema as { safeParse?: unknown }).safeParse !== "function") fail(field, "expected a zod schema");
  }
  options.tools?.forEach((tool, index) => {
    if (tool?.name === FINAL_ANSWER_TOOL) fail(`tools[${index}].name`, `"${FINAL_ANSWER_TOOL}" is reserved for the final answer`);
  });
  // An output schema without a JSON Schema form is refused now, not at the first run.
  planOutput(options.name, options.output, { provider: "", modelId: "", api: "", stream: async function* () {} }, "tool");
}

/** The usage of `messages` added to `from` (an earlier run's totals when resuming). */
function sumUsage(messages: RunOutcome["messages"], from: AnswerTotals = emptyAnswerTotals()): AgentUsage {
  let totals = from;
  for (const message of messages) if (message.role === "assistant") totals = addToAnswerTotals(totals, message);
  return totals.usage;
}

function instructionsFor(plan: OutputPlan, instructions: string): string {
  if (plan.mode === "tool") return `${instructions}\n\nWhen you are done, call the ${FINAL_ANSWER_TOOL} tool with your answer as its arguments.`;
  if (plan.mode === "native") return `${instructions}\n\nYour final answer is JSON matching the response schema.`;
  return instructions;
}

/**
 * Defines a typed agent (see the module contract).
 * @throws AgentDefinitionError naming the field of a bad definition.
 * @example
 * const summarize = defineAgent({ name: "summarize", instructions: "Summarize in one line." });
 * const outcome = await summarize.run("long text…", { harness }); // output: string
 */
export function defineAgent<Input extends z.ZodType = z.ZodString, Output extends z.ZodType | undefined = undefined, const ModelName extends string = never>(
  options: DefineAgentOptions<Input, Output, ModelName>,
): TypedAgent<Input, Output, ModelName> {
  check(options as DefineAgentOptions<z.ZodType, z.ZodType | undefined>);
  const definition = Object.freeze({ ...options });
  // Without `input`, `Input` is its default, `z.ZodString`: the default schema is that type.
  const inputSchema = (options.input ?? z.string()) as Input;
  const maxRepairs = options.maxRepairs ?? 2;

  async function run(input: z.input<Input>, runOptions: AgentRunOptions): Promise<AgentOutcome<AgentOutputOf<Output>>> {
    const parsed = inputSchema.safeParse(input);
    if (!parsed.success) throw new AgentInputError(options.name, issuesOf(parsed.error));
    return invoke(parsed.data, runOptions);
  }

  async function resume(sessionId: string, runOptions: Omit<AgentRunOptions, "resumeSession">): Promise<AgentOutcome<AgentOutputOf<Output>>> {
    const log = runOptions.harness.repository?.log;
    if (!log) throw new InvalidArgumentError(`${options.name}.resume(): the harness has no repository to read session ${sessionId} from`);
    const { started } = await priorInvocation(log, sessionId);
    if (!started || started.agent !== options.name) {
      throw new InvalidArgumentError(`${options.name}.resume(): session ${sessionId} holds no invocation of agent "${options.name}"${started ? ` (it holds one of "${started.agent}")` : ""}`);
    }
    return invoke(started.input as z.output<Input>, { ...runOptions, resumeSession: sessionId });
  }

  async function invoke(value: z.output<Input>, runOptions: AgentRunOptions): Promise<AgentOutcome<AgentOutputOf<Output>>> {
    const { harness, signal } = runOptions;
    const client = typeof options.model === "string" ? harness.registry.get(options.model).client : (options.model ?? harness.registry.get(harness.getState().modelName).client);
    const plan = planOutput(options.name, options.output, client, options.outputMode ?? "auto");
    const judge = createAnswerJudge(plan, maxRepairs);
    // eslint-disable-next-line prefer-const -- the model's follow-up reads the session created below.
    let session: HarnessSession | undefined;
    const model = judgedModel(client, judge, (message) => session?.followUp(message));
    const instructions = typeof options.instructions === "function" ? options.instructions(value) : options.instructions;
    const overrides = { systemPrompt: instructionsFor(plan, instructions), tools: [...(options.tools ?? []), ...(plan.mode === "tool" ? [finalAnswerTool(judge)] : [])], model };
    session =
      runOptions.resumeSession !== undefined
        ? await harness.openSession(runOptions.resumeSession, overrides)
        : await harness.createSession({ ...(runOptions.cwd !== undefined ? { cwd: runOptions.cwd } : {}), metadata: { ...runOptions.metadata, agent: options.name }, ...overrides });
    const live = session;
    const prior = runOptions.resumeSession !== undefined && harness.repository ? await priorInvocation(harness.repository.log, live.id) : { totals: emptyAnswerTotals() };
    // A resumed invocation goes on from what its log holds: repairs sent and tokens used by its earlier runs.
    judge.continueFrom(prior.totals.repairs);
    const invocationId = prior.started?.invocationId ?? randomUUID();
    const common = { agent: options.name, invocationId };
    const onAbort = () => live.abort(signal?.reason instanceof Error ? signal.reason.message : "aborted");
    try {
      await runOptions.onSession?.(live.id);
      if (prior.ended) return endedOutcome(prior.ended, live.id) as AgentOutcome<AgentOutputOf<Output>>;
      if (!prior.started) await live.agent.appendRecords([{ type: "agent.started", data: { ...common, mode: plan.mode satisfies OutputMode, maxRepairs, input: value } }]);
      const text = options.prompt ? options.prompt(value) : typeof value === "string" ? value : JSON.stringify(value, null, 2);
      signal?.addEventListener("abort", onAbort, { once: true });
      const last = prior.lastMessage;
      // A resumed invocation whose calls still wait for a decision stays suspended (nothing runs).
      if (prior.started) {
        const undecided = (await live.pendingApprovals()).filter((approval) => approval.status === "pending").map((approval) => approval.toolCallId);
        if (undecided.length > 0) return { ...common, sessionId: live.id, repairs: judge.repairs, usage: sumUsage([], prior.totals), status: "suspended", runId: prior.lastRunId ?? invocationId, pendingApprovals: undecided };
      }
      // A resumed invocation whose answer is complete is judged as it is; one cut off goes on in its run's context.
      const answered = prior.started && last?.role === "assistant" && last.stopReason === "stop" && !last.content.some((block) => block.type === "toolCall");
      const running: Promise<RunOutcome> = answered
        ? Promise.resolve({ runId: prior.lastRunId ?? invocationId, status: "done", messages: [], lastAssistant: last })
        : prior.started && last
          ? live.continue()
          : live.prompt({ role: "user", content: text, timestamp: Date.now() });
      if (signal?.aborted) onAbort();
      const ran = await running;
      const usage = sumUsage(ran.messages, prior.totals);
      const base = { ...common, sessionId: live.id, repairs: judge.repairs, usage };
      let outcome: AgentOutcome<AgentOutputOf<Output>>;
      // Stopped for tool approval: the invocation is not over (no agent.ended); `resume` goes on.
      if (ran.status === "suspended") return { ...base, status: "suspended", runId: ran.runId, pendingApprovals: ran.pendingApprovals ?? [] };
      if (ran.status !== "done") {
        // A run a budget stopped is a failed invocation (code BUDGET_EXCEEDED, docs/budgets.md).
        const status = ran.status === "budget_exceeded" ? "failed" : ran.status;
        const error = new AgentRunError(options.name, status, ran.error ?? ran.status, ran.status === "budget_exceeded" ? "BUDGET_EXCEEDED" : ran.code);
        outcome = { ...base, status, runId: ran.runId, error };
      } else {
        // A final message the stream did not judge (a `length` stop, say) is judged now, without a repair.
        let judged = judge.last;
        if (plan.mode !== "tool" && ran.lastAssistant && (judged === undefined || ran.lastAssistant.stopReason !== "stop")) judged = judgeMessage(plan, ran.lastAssistant);
        if (judged === undefined) judged = ran.lastAssistant ? judgeMessage(plan, ran.lastAssistant) : { ok: false, issues: [{ path: "(root)", message: "the run gave no final answer" }] };
        outcome = judged.ok
          ? { ...base, status: "done", runId: ran.runId, output: judged.value as AgentOutputOf<Output> }
          : { ...base, status: "failed", runId: ran.runId, error: new AgentOutputError(options.name, judged.issues, judge.repairs) };
      }
      await live.agent.appendRecords([{ type: "agent.ended", data: endedData(outcome), metadata: { ...(outcome.runId ? { runId: outcome.runId } : {}) } }]);
      return outcome;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      // A repair queued by a run that then did not go on must not wait in the log for a next run.
      if (live.hasQueuedMessages()) live.clearFollowUpQueue();
      await live.dispose();
    }
  }

  return { name: options.name, definition, run, resume } as TypedAgent<Input, Output, ModelName>;
}

function endedData(outcome: Exclude<AgentOutcome<unknown>, AgentSuspendedOutcome>): ArborEventData<"agent.ended"> {
  const base = { agent: outcome.agent, invocationId: outcome.invocationId, repairs: outcome.repairs, usage: outcome.usage, ...(outcome.runId ? { runId: outcome.runId } : {}) };
  if (outcome.status === "done") return { ...base, status: "done", runId: outcome.runId, output: outcome.output };
  if (outcome.status === "failed") return { ...base, status: "failed", code: outcome.error.code, error: outcome.error.message };
  return { ...base, status: outcome.status, reason: outcome.error.message };
}

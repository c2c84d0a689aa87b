/**
 * How a typed agent gets its final answer: `native` (the model's structured output; `responseFormat` with the JSON Schema, non-object roots wrapped
 * as `{ value }`), `tool` (a terminating `final_answer` tool), or `text` (no schema, no repairs). An invalid answer gets up to `maxRepairs` repairs
 * naming each failing field, as further turns of the same run; then it is final (`AgentOutputError`).
 */
import { z } from "zod";
import { FINAL_ANSWER_TOOL, REPAIR_MESSAGE_TYPE } from "../core/agent-answer.ts";
import type { AssistantMessage, CustomMessage } from "../core/messages.ts";
import { withModelStream, type ModelClient, type ResponseFormat } from "../core/model-stream.ts";
import type { AgentTool, ToolResult } from "../core/tools.ts";
import { SUMMARY_SYSTEM_PROMPT } from "../compaction/prompts.ts";
import { AgentDefinitionError, formatIssues, issuesOf, type AgentIssue } from "./errors.ts";

/** How the final answer is produced. */
export type OutputMode = "native" | "tool" | "text";

export { FINAL_ANSWER_TOOL, REPAIR_MESSAGE_TYPE };

/** What an agent's output needs, decided once per run. */
export interface OutputPlan {
  mode: OutputMode;
  /** The zod schema of the output (absent in text mode). */
  schema?: z.ZodType;
  /** The JSON Schema the model sees (an object schema). */
  jsonSchema?: Record<string, unknown>;
  /** True when the output schema is not an object and travels as `{ value }`. */
  wrapped: boolean;
  /** The schema name the provider sees. */
  name: string;
}

/**
 * The JSON Schema of an output schema, an object at the root (wrapped as `{ value }` if not).
 * @throws AgentDefinitionError (field `output`) when zod cannot express the schema in JSON Schema.
 */
export function outputJsonSchema(schema: z.ZodType): { jsonSchema: Record<string, unknown>; wrapped: boolean } {
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = z.toJSONSchema(schema, { io: "output", unrepresentable: "throw" }) as Record<string, unknown>;
  } catch (error) {
    throw new AgentDefinitionError(`Invalid agent option "output": the schema has no JSON Schema form (${(error as Error).message})`, "output");
  }
  delete jsonSchema.$schema;
  if (jsonSchema.type === "object") return { jsonSchema, wrapped: false };
  return { jsonSchema: { type: "object", properties: { value: jsonSchema }, required: ["value"], additionalProperties: false }, wrapped: true };
}

/** Decides the output mode for `model` (see the module contract). */
export function planOutput(agent: string, schema: z.ZodType | undefined, model: ModelClient, requested: "auto" | "native" | "tool"): OutputPlan {
  const name = agent.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  if (!schema) return { mode: "text", wrapped: false, name };
  const { jsonSchema, wrapped } = outputJsonSchema(schema);
  const mode = requested === "auto" ? (model.structuredOutput ? "native" : "tool") : requested;
  return { mode, schema, jsonSchema, wrapped, name };
}

/** The request field of native mode. */
export function responseFormatOf(plan: OutputPlan): ResponseFormat {
  return { type: "json", schema: plan.jsonSchema!, name: plan.name };
}

/** The text of an assistant message's text blocks. */
function answerText(message: AssistantMessage): string {
  return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}

/** `text` without one surrounding Markdown code fence. */
function unfenced(text: string): string {
  const fenced = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return fenced ? fenced[1] : text;
}

/** A judged answer. */
export type Judged = { ok: true; value: unknown } | { ok: false; issues: AgentIssue[] };

/** Validates an answer value (the JSON the model produced) against the plan. */
export function judgeValue(plan: OutputPlan, raw: unknown): Judged {
  if (plan.mode === "text") return typeof raw === "string" ? { ok: true, value: raw } : { ok: false, issues: [{ path: "(root)", message: "expected text" }] };
  let value = raw;
  if (plan.wrapped) {
    if (typeof raw !== "object" || raw === null || !("value" in raw)) return { ok: false, issues: [{ path: "value", message: "missing: the answer goes in a `value` field" }] };
    value = (raw as { value: unknown }).value;
  }
  const parsed = plan.schema!.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, issues: issuesOf(parsed.error).map((issue) => (plan.wrapped ? { ...issue, path: issue.path === "(root)" ? "value" : `value.${issue.path}` } : issue)) };
}

/** Judges a final assistant message: its text (native, text mode) or the absence of a final-answer call (tool mode). */
export function judgeMessage(plan: OutputPlan, message: AssistantMessage): Judged {
  const text = answerText(message);
  if (plan.mode === "text") return { ok: true, value: text };
  if (plan.mode === "tool") return { ok: false, issues: [{ path: "(root)", message: `no ${FINAL_ANSWER_TOOL} call: finish by calling the ${FINAL_ANSWER_TOOL} tool with the answer as its arguments` }] };
  let raw: unknown;
  try {
    raw = JSON.parse(unfenced(text));
  } catch (error) {
    return { ok: false, issues: [{ path: "(root)", message: `not JSON (${(error as Error).message})` }] };
  }
  return judgeValue(plan, raw);
}

/** The repair request sent back to the model for `issues`. */
export function repairText(plan: OutputPlan, issues: readonly AgentIssue[]): string {
  const how = plan.mode === "tool" ? `Call ${FINAL_ANSWER_TOOL} again with corrected arguments.` : "Answer again with only the corrected JSON.";
  return `Your final answer does not match the required output schema: ${formatIssues(issues)}. ${how}`;
}

/** The state of one invocation's answer: repairs sent, the last judgement, and whether it is final. */
export interface AnswerJudge {
  readonly plan: OutputPlan;
  /** Repairs sent so far. */
  readonly repairs: number;
  /** The last judgement, if any. */
  readonly last: Judged | undefined;
  /** Judges a final message; returns the repair message to queue, or undefined (valid, or out of repairs). */
  onFinalMessage(message: AssistantMessage): CustomMessage | undefined;
  /** Judges a final-answer tool call's arguments; returns the tool's result. */
  onToolAnswer(args: unknown): ToolResult;
  /**
   * Counts `repairs` already sent by the invocation's earlier runs (a resume: the count its log holds), so the bound `maxRepairs` is the invocation's
   * and repair ordinals go on. Call before the run starts; a count below the current one changes nothing.
   */
  continueFrom(repairs: number): void;
}

/** Creates the judge of one invocation (see the module contract). */
export function createAnswerJudge(plan: OutputPlan, maxRepairs: number): AnswerJudge {
  let repairs = 0;
  let last: Judged | undefined;
  let settled = false;
  const judge: AnswerJudge = {
    plan,
    get repairs() {
      return repairs;
    },
    get last() {
      return last;
    },
    onFinalMessage(message) {
      // A valid tool answer already ended the invocation; nothing after it is read.
      if (settled) return undefined;
      last = judgeMessage(plan, message);
      if (last.ok || repairs >= maxRepairs) return undefined;
      repairs += 1;
      return { role: "custom", customType: REPAIR_MESSAGE_TYPE, content: repairText(plan, last.issues), display: true, details: { repair: repairs, issues: last.issues }, timestamp: Date.now() };
    },
    continueFrom(sent) {
      repairs = Math.max(repairs, sent);
    },
    onToolAnswer(args) {
      if (settled) return { content: [{ type: "text", text: "The final answer was already given." }], terminate: true };
      last = judgeValue(plan, args);
      if (last.ok) {
        settled = true;
        return { content: [{ type: "text", text: "Final answer accepted." }], terminate: true };
      }
      if (repairs >= maxRepairs) {
        settled = true;
        return { content: [{ type: "text", text: `Invalid final answer: ${formatIssues(last.issues)}. No repairs left.` }], isError: true, terminate: true };
      }
      repairs += 1;
      return { content: [{ type: "text", text: repairText(plan, last.issues) }], isError: true, details: { repair: repairs, issues: last.issues } };
    },
  };
  return judge;
}

/** The final-answer tool of tool mode (parameters: the output's JSON Schema); the judge validates, so a bad answer is a repair. */
export function finalAnswerTool(judge: AnswerJudge): AgentTool<unknown> {
  return {
    name: FINAL_ANSWER_TOOL,
    description: "Give your final answer, once you are done, as this tool's arguments. Nothing after this call is read.",
    parameters: judge.plan.jsonSchema!,
    validate: (args) => ({ ok: true, value: args }),
    execute: async (args) => judge.onToolAnswer(args),
  };
}

/**
 * `client` for one agent run: native mode adds `responseFormat` to every request of the loop; every finished message without tool calls is judged
 * before its `done` event is passed on, and a repair goes to `followUp` then (so the run's follow-up poll, which comes after that event, finds it).
 * Summary calls (compaction, branch summaries: the `SUMMARY_SYSTEM_PROMPT`) pass through untouched.
 */
export function judgedModel(client: ModelClient, judge: AnswerJudge, followUp: (message: CustomMessage) => void): ModelClient {
  const { plan } = judge;
  async function* stream(request: Parameters<ModelClient["stream"]>[0], options: Parameters<ModelClient["stream"]>[1]) {
    // The session's compaction and branch summaries use the same model: their calls are not answers.
    if (request.systemPrompt === SUMMARY_SYSTEM_PROMPT) {
      yield* client.stream(request, options);
      return;
    }
    const sent = plan.mode === "native" ? { ...request, responseFormat: responseFormatOf(plan) } : request;
    for await (const event of client.stream(sent, options)) {
      if (event.type === "done" && event.message.stopReason === "stop" && !event.message.content.some((block) => block.type === "toolCall")) {
        const repair = judge.onFinalMessage(event.message);
        if (repair) followUp(repair);
      }
      yield event;
    }
  }
  return withModelStream(client, stream);
}

/**
 * The one internal record of a span and its mapping to names, kinds and attributes in the OTel GenAI namespace (exact semantic-convention names),
 * the OpenInference one, or both: `invoke_agent`, `invoke_workflow`, `chat` (CLIENT), `execute_tool`, `arbor.compaction`; `error.type` and the
 * `arbor.*` attributes in every flavor; content only when the record holds it. Every string has known secrets replaced by `[redacted]`.
 */
import type { Attributes, AttributeValue, SpanKind } from "@opentelemetry/api";
import { otelApi } from "./otel-api.ts";
import { openInferenceMessages, type GenAiMessage } from "./content.ts";
import type { TelemetryFlavor } from "./options.ts";

/** What a span is about. */
export type SpanOperation = "invoke_agent" | "invoke_workflow" | "chat" | "execute_tool" | "compaction" | "branch_summary";

/** Token counts of a model call (or the sum over a run), in tokens; absent = not reported. */
export interface RecordUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

/** Content carried only with `captureContent`. */
export interface RecordContent {
  systemInstructions?: string;
  inputMessages?: GenAiMessage[];
  outputMessages?: GenAiMessage[];
  /** JSON text of a tool call's arguments. */
  toolArguments?: string;
  /** Text of a tool result. */
  toolResult?: string;
  /** OpenInference `input.value` / `output.value` of agent and operation spans. */
  input?: string;
  output?: string;
}

/** The one internal record of a span (see the module contract). */
export interface SpanRecord {
  operation: SpanOperation;
  sessionId: string;
  runId?: string;
  agentName?: string;
  workflowName?: string;
  /** Arbor's provider id (`openai`, `anthropic`, `google`, ...). */
  provider?: string;
  requestModel?: string;
  maxTokens?: number;
  temperature?: number;
  responseModel?: string;
  responseId?: string;
  finishReasons?: string[];
  usage?: RecordUsage;
  toolName?: string;
  toolCallId?: string;
  toolType?: string;
  /** Low-cardinality failure class (an HTTP status, `timeout`, a tool outcome, an error code). */
  errorType?: string;
  /** Retry attempt of a `chat` span (1 = the first retry); absent for the first try. */
  attempt?: number;
  /** Run status or tool outcome. */
  status?: string;
  /** Why a compaction ran (`threshold`, `overflow`, `manual`). */
  reason?: string;
  content?: RecordContent;
}

/** How records become attributes. */
export interface AttributeSettings {
  flavor: TelemetryFlavor;
  /** Redacted from every string value; longest first. */
  secrets: readonly string[];
}

/** GenAI provider name of an Arbor provider id. */
export function genAiProviderName(provider: string): string {
  if (provider === "google") return "gcp.gemini";
  if (provider === "xai") return "x_ai";
  return provider;
}

/** The span name of a record. */
export function spanName(record: SpanRecord): string {
  switch (record.operation) {
    case "invoke_agent":
      return `invoke_agent ${record.agentName ?? "arbor"}`;
    case "invoke_workflow":
      return `invoke_workflow ${record.workflowName ?? "workflow"}`;
    case "chat":
      return `chat ${record.requestModel ?? "unknown"}`;
    case "execute_tool":
      return `execute_tool ${record.toolName ?? "unknown"}`;
    default:
      return `arbor.${record.operation}`;
  }
}

/** The span kind of a record: CLIENT for model calls, INTERNAL otherwise. */
export function spanKind(record: SpanRecord): SpanKind {
  return record.operation === "chat" ? otelApi().SpanKind.CLIENT : otelApi().SpanKind.INTERNAL;
}

const OPENINFERENCE_KIND: Record<SpanOperation, string> = {
  invoke_agent: "AGENT",
  invoke_workflow: "CHAIN",
  chat: "LLM",
  execute_tool: "TOOL",
  compaction: "CHAIN",
  branch_summary: "CHAIN",
};

function put(attributes: Attributes, key: string, value: AttributeValue | undefined): void {
  if (value !== undefined) attributes[key] = value;
}

function genAi(record: SpanRecord): Attributes {
  const a: Attributes = {};
  const isGenAiOperation = record.operation !== "compaction" && record.operation !== "branch_summary";
  if (isGenAiOperation) put(a, "gen_ai.operation.name", record.operation);
  put(a, "gen_ai.provider.name", record.provider === undefined ? undefined : genAiProviderName(record.provider));
  put(a, "gen_ai.agent.name", record.agentName);
  if (record.operation === "invoke_workflow") put(a, "gen_ai.workflow.name", record.workflowName);
  put(a, "gen_ai.conversation.id", record.sessionId);
  put(a, "gen_ai.request.model", record.requestModel);
  put(a, "gen_ai.request.max_tokens", record.maxTokens);
  put(a, "gen_ai.request.temperature", record.temperature);
  put(a, "gen_ai.response.id", record.responseId);
  put(a, "gen_ai.response.model", record.responseModel);
  put(a, "gen_ai.response.finish_reasons", record.finishReasons);
  put(a, "gen_ai.usage.input_tokens", record.usage?.input);
  put(a, "gen_ai.usage.output_tokens", record.usage?.output);
  put(a, "gen_ai.usage.cache_read.input_tokens", record.usage?.cacheRead);
  put(a, "gen_ai.usage.cache_creation.input_tokens", record.usage?.cacheWrite);
  put(a, "gen_ai.usage.reasoning.output_tokens", record.usage?.reasoning);
  put(a, "gen_ai.tool.name", record.toolName);
  put(a, "gen_ai.tool.call.id", record.toolCallId);
  put(a, "gen_ai.tool.type", record.toolType);
  const content = record.content;
  if (content) {
    put(a, "gen_ai.system_instructions", content.systemInstructions === undefined ? undefined : JSON.stringify([{ type: "text", content: content.systemInstructions }]));
    put(a, "gen_ai.input.messages", content.inputMessages && JSON.stringify(content.inputMessages));
    put(a, "gen_ai.output.messages", content.outputMessages && JSON.stringify(content.outputMessages));
    put(a, "gen_ai.tool.call.arguments", content.toolArguments);
    put(a, "gen_ai.tool.call.result", content.toolResult);
  }
  return a;
}

function openInference(record: SpanRecord): Attributes {
  const a: Attributes = { "openinference.span.kind": OPENINFERENCE_KIND[record.operation] };
  put(a, "session.id", record.sessionId);
  put(a, "agent.name", record.agentName);
  if (record.operation === "chat") {
    put(a, "llm.model_name", record.responseModel ?? record.requestModel);
    put(a, "llm.provider", record.provider);
    const parameters = { ...(record.maxTokens !== undefined ? { max_tokens: record.maxTokens } : {}), ...(record.temperature !== undefined ? { temperature: record.temperature } : {}) };
    a["llm.invocation_parameters"] = JSON.stringify(parameters);
    const usage = record.usage;
    put(a, "llm.token_count.prompt", usage?.input);
    put(a, "llm.token_count.completion", usage?.output);
    if (usage?.input !== undefined || usage?.output !== undefined) a["llm.token_count.total"] = (usage.input ?? 0) + (usage.output ?? 0);
    put(a, "llm.token_count.prompt_details.cache_read", usage?.cacheRead);
    put(a, "llm.token_count.prompt_details.cache_write", usage?.cacheWrite);
  }
  if (record.operation === "execute_tool") {
    put(a, "tool.name", record.toolName);
    put(a, "tool.id", record.toolCallId);
  }
  const content = record.content;
  if (content) {
    if (content.inputMessages) Object.assign(a, openInferenceMessages("llm.input_messages", content.inputMessages));
    if (content.outputMessages) Object.assign(a, openInferenceMessages("llm.output_messages", content.outputMessages));
    const input = content.input ?? content.toolArguments ?? (content.inputMessages && JSON.stringify(content.inputMessages));
    const output = content.output ?? content.toolResult ?? (content.outputMessages && JSON.stringify(content.outputMessages));
    put(a, "input.value", input);
    put(a, "output.value", output);
    if (input !== undefined) a["input.mime_type"] = content.input === undefined ? "application/json" : "text/plain";
    if (output !== undefined) a["output.mime_type"] = content.output === undefined && content.toolResult === undefined ? "application/json" : "text/plain";
    put(a, "tool.parameters", content.toolArguments);
  }
  return a;
}

function arbor(record: SpanRecord): Attributes {
  const a: Attributes = { "arbor.session.id": record.sessionId };
  put(a, "arbor.run.id", record.runId);
  put(a, "arbor.retry.attempt", record.attempt);
  put(a, "error.type", record.errorType);
  if (record.operation === "invoke_agent") put(a, "arbor.run.status", record.status);
  if (record.operation === "execute_tool") put(a, "arbor.tool.outcome", record.status);
  put(a, "arbor.compaction.reason", record.reason);
  return a;
}

/** `text` with every secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join("[redacted]");
  return result;
}

/** The attributes of a record in the chosen flavor, secrets redacted (see the module contract). */
export function spanAttributes(record: SpanRecord, settings: AttributeSettings): Attributes {
  const attributes: Attributes = {
    ...(settings.flavor === "openinference_only" ? {} : genAi(record)),
    ...(settings.flavor === "gen_ai_only" ? {} : openInference(record)),
    ...arbor(record),
  };
  if (settings.secrets.length === 0) return attributes;
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === "string") attributes[key] = redact(value, settings.secrets);
    else if (Array.isArray(value)) attributes[key] = value.map((item) => (typeof item === "string" ? redact(item, settings.secrets) : item)) as AttributeValue;
  }
  return attributes;
}

/**
 * The one internal record of a span, and its mapping to span names, kinds and attributes in the
 * OTel GenAI namespace, the OpenInference namespace, or both.
 *
 * Contract (attribute names exactly those of the OpenTelemetry GenAI semantic conventions; one
 * record, two namespaces, as @purista/harness does):
 * - names: `invoke_agent {agent}`, `invoke_workflow {workflow}`, `chat {request model}`,
 *   `execute_tool {tool}`; Arbor's own operations (`arbor.compaction`, `arbor.branch_summary`)
 *   hold the `chat` spans of the model calls they make; kinds: `chat` CLIENT, all others INTERNAL;
 * - GenAI: `gen_ai.operation.name`, `gen_ai.provider.name` (Arbor's `google` is `gcp.gemini`),
 *   `gen_ai.agent.name`, `gen_ai.conversation.id` (the session id), request and response model,
 *   `gen_ai.response.id`, `gen_ai.response.finish_reasons`, `gen_ai.usage.*` (cache read and
 *   creation), tool name / call id / type; never `gen_ai.agent.id`;
 * - OpenInference: `openinference.span.kind` (AGENT, CHAIN, LLM, TOOL), `agent.name`,
 *   `session.id`, `llm.*` (model name, provider, invocation parameters as JSON,
 *   `llm.token_count.*`), `tool.name`, `tool.id`;
 * - both flavors: `error.type` on failures and the `arbor.*` attributes (`arbor.session.id`,
 *   `arbor.run.id`, `arbor.retry.attempt`, `arbor.run.status`, `arbor.tool.outcome`,
 *   `arbor.compaction.reason`);
 * - content (only when the record holds it, i.e. with `captureContent`): `gen_ai.system_instructions`,
 *   `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
 *   `gen_ai.tool.call.result` and their OpenInference twins (`llm.input_messages.*`,
 *   `llm.output_messages.*`, `input.value`, `output.value`, `tool.parameters`);
 * - every string value (arrays included) has the known secrets replaced by `[redacted]`.
 *
 * @example
 * ```ts
 * spanAttributes({ operation: "execute_tool", sessionId: "s1", toolName: "read", toolCallId: "c1" }, { flavor: "both", secrets: [] });
 * // { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read", ..., "openinference.span.kind": "TOOL", "tool.name": "read", ... }
 * ```
 */
import { SpanKind, type Attributes, type AttributeValue } from "@opentelemetry/api";
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

/**
 * The span name of a record.
 *
 * @example
 * ```ts
 * spanName({ operation: "chat", sessionId: "s", requestModel: "gpt-4o-mini" }); // "chat gpt-4o-mini"
 * ```
 */
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
  return record.operation === "chat" ? SpanKind.CLIENT : SpanKind.INTERNAL;
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

/**
 * The attributes of a record in the chosen flavor, secrets redacted (see the module contract).
 *
 * @example
 * ```ts
 * spanAttributes(record, { flavor: "gen_ai_only", secrets: [apiKey] });
 * ```
 */
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

/**
 * `arbor-agent`: what a user needs first (a harness, models, tools, sessions and their event log, the message and event types, the errors), an
 * explicit list kept by the export-list snapshot (`test/package/exports.test.ts`). Everything else is one import further, in a subpath
 * (`arbor-agent/log`, `/session`, `/agent`, `/compaction`, `/tools`, `/mcp`, `/pi`, `/model`, `/resources`, `/harness`, `/testing`). Its
 * declarations type-check under `strict`, `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess` and `skipLibCheck: false`.
 * @example
 * import { createHarness, createOpenAIModel } from "arbor-agent";
 * const harness = await createHarness({ models: { main: createOpenAIModel({ modelId: "gpt-4o-mini" }) } });
 */

// The harness and its sessions.
export { createHarness, type AgentHarness } from "./harness/create-harness.ts";
export type { AgentHarnessOptions, ModelEntry } from "./harness/options.ts";
export type { HarnessSession, HarnessState } from "./harness/harness-session-types.ts";
export type { HarnessHooks } from "./harness/hook-types.ts";
export type { RunOutcome } from "./machines/agent-types.ts";

// Models.
export { createOpenAIModel, type OpenAIModelOptions } from "./adapters/model/openai.ts";
export type { ModelClient } from "./core/model-stream.ts";
export { createAnthropicModel, createGoogleModel, createModel, type ModelProvider, type ProviderModelOptions } from "./adapters/model/providers.ts";

// Tools.
export { defineTool, type AgentTool, type DefineToolOptions, type ToolExecuteContext, type ToolResult } from "./core/tools.ts";
export { defineJsonSchemaTool, type JsonSchemaTool } from "./adapters/tools/tool-schema.ts";
export { createCodingTools, createReadOnlyTools } from "./adapters/tools/index.ts";
export { createExecutionEnv, type ExecutionEnv, type ExecutionEnvOptions } from "./adapters/execution-env.ts";
export { connectMcpServers } from "./adapters/mcp/connect.ts";
export type { McpServerConfig } from "./adapters/mcp/config.ts";

// The event log and sessions.
export { createMemoryEventLog } from "./store/in-memory/memory-event-log.ts";
export { createSqliteEventLog, openEventLog } from "./store/sqlite/sqlite-event-log.ts";
export { createPostgresEventLog } from "./store/postgres/pg-event-log.ts";
export type { EventLog, NewEvent, StoredEvent } from "./store/event-log.ts";
export { createSessionRepository } from "./store/session-repository.ts";
export type { SessionContext, SessionHandle, SessionRepository, SessionStats, SessionSummary } from "./store/session-types.ts";
export type { SessionEntry } from "./core/entries.ts";

// Messages.
export {
  messageText,
  type AgentMessage,
  type AssistantMessage,
  type ThinkingLevel,
  type ToolCall,
  type ToolResultMessage,
  type Usage,
  type UserMessage,
} from "./core/messages.ts";

// Errors: every error the API throws is an ArborError with a stable `code`.
export {
  ArborError,
  CompactionError,
  EntryNotFoundError,
  ExpectedVersionConflictError,
  HarnessConfigError,
  InvalidArgumentError,
  InvalidStateError,
  ModelConfigError,
  PathEscapeError,
  SessionBusyError,
  SessionNotFoundError,
  ToolDefinitionError,
} from "./core/errors.ts";

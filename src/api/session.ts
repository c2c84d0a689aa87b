/**
 * `arbor-agent/session`: Sessions as projections of the log: the repository, session handles, views, entries, messages and the context conversion (pi's `convertToLlm`).
 * @example
 * import { createSessionRepository } from "arbor-agent/session";
 * const sessions = createSessionRepository({ log });
 */
export {
  createSessionRepository,
  type SessionRepositoryOptions,
} from "../store/session-repository.ts";
export {
  type ContextDiagnostic,
  type SessionContext,
  type SessionTreeNode,
  type SessionStats,
  type SessionView,
  type NewEntry,
  type SessionHandle,
  type SessionSummary,
  type SessionRepository,
  type ImportEntriesOptions,
} from "../store/session-types.ts";
export {
  isKnownEntry,
  KNOWN_ENTRY_TYPES,
  type EntryBase,
  type MessageEntry,
  type ThinkingLevelChangeEntry,
  type ModelChangeEntry,
  type ActiveToolsChangeEntry,
  type FileOperationsDetails,
  type CompactionEntry,
  type BranchSummaryEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type LabelEntry,
  type SessionInfoEntry,
  type UnknownEntry,
  type KnownEntry,
  type SessionEntry,
} from "../core/entries.ts";
export {
  unknownUsage,
  messageText,
  THINKING_LEVELS,
  type TextContent,
  type ThinkingContent,
  type ImageContent,
  type ToolCall,
  type UsageCost,
  type Usage,
  type StopReason,
  type UserMessage,
  type AssistantMessage,
  type ToolResultMessage,
  type CustomMessage,
  type BashExecutionMessage,
  type CompactionSummaryMessage,
  type BranchSummaryMessage,
  type AgentMessage,
  type MessageRole,
  type ThinkingLevel,
} from "../core/messages.ts";
export {
  bashExecutionToText,
  convertToLlm,
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_SUFFIX,
  BRANCH_SUMMARY_PREFIX,
  BRANCH_SUMMARY_SUFFIX,
  type LlmMessage,
} from "../core/convert-to-llm.ts";

/**
 * Arbor's public API. See README.md, docs/api.md and docs/architecture.md.
 *
 * Contract: everything exported here is public and documented; the event schemas and
 * these names change only deliberately. Test helpers live in `arbor/testing`.
 *
 * @example
 * ```ts
 * import { createHarness, createOpenAIModel } from "arbor";
 * const harness = await createHarness({ models: { main: createOpenAIModel({ modelId: "gpt-4o-mini" }) } });
 * ```
 */
export * from "./core/errors.ts";
export * from "./core/messages.ts";
export * from "./core/entries.ts";
export * from "./core/tools.ts";
export type * from "./core/model-stream.ts";
export type * from "./store/event-log.ts";
export type * from "./store/session-types.ts";
export * from "./store/events/index.ts";
export * from "./core/convert-to-llm.ts";
export { createSqliteSnapshotStore, type SessionSnapshotStore, type SqliteSnapshotStoreOptions, type StoredSnapshot } from "./store/session-snapshots.ts";

// Event logs and sessions.
export { createMemoryEventLog, type MemoryEventLogOptions } from "./store/memory-event-log.ts";
export { createSqliteEventLog, openEventLog, type SqliteEventLogOptions, type SqliteSynchronous } from "./store/sqlite-event-log.ts";
export { createPostgresEventLog, openPostgresEventLog, type PostgresEventLog, type PostgresEventLogOptions } from "./store/pg-event-log.ts";
export type { StreamLease, StreamOwnership } from "./store/stream-ownership.ts";
export { createRedactingEventLog, type RedactingEventLog } from "./store/redacting-event-log.ts";
export { createSessionRepository, type ArborSessionRepository, type ImportEntriesOptions, type SessionRepositoryOptions } from "./store/session-repository.ts";

// The agent actor.
export { createAgent } from "./machines/agent.ts";
export { createArborInspector, redactContent, type ArborInspector, type ArborInspectorOptions } from "./machines/inspect.ts";
export { recoverSession, type RecoveryReport } from "./machines/recovery.ts";
export { assertNoLiveRun, currentRunOwner, findLiveRun, isRunOwnerAlive, type RunOwner } from "./machines/run-lease.ts";
export type * from "./machines/agent-types.ts";

// Adapters: models, tools, skills, prompt templates, MCP, pi JSONL.
export * from "./adapters/model/index.ts";
export * from "./adapters/tools/index.ts";
export * from "./adapters/skills/index.ts";
export * from "./adapters/prompt-templates/index.ts";
export * from "./adapters/mcp/index.ts";
export * from "./adapters/pi-jsonl/index.ts";

// Compaction and branch summaries.
export * from "./compaction/index.ts";

// The harness.
export * from "./harness/index.ts";

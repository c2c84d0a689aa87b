/**
 * `arbor-agent/log`: The event log: the `EventLog` contract, its SQLite and in-memory implementations, the redacting decorator, snapshots, and the event catalogue and registry.
 *
 * Contract (ours): an explicit list; an addition or removal is a deliberate change that the
 * export-list snapshot (`test/package/exports.test.ts`) shows. The root entry `arbor-agent` holds
 * what a user needs first; everything here is one import further.
 *
 * @example
 * ```ts
 * import { createSqliteEventLog } from "arbor-agent/log";
 * const log = createSqliteEventLog({ path: ".arbor/arbor.db" });
 * ```
 */
export {
  type EventMetadata,
  type NewEvent,
  type StoredEvent,
  type ExpectedVersion,
  type AppendOptions,
  type AppendResult,
  type ReadStreamOptions,
  type ReadAllOptions,
  type SubscribeOptions,
  type StreamInfo,
  type EventLog,
} from "../store/event-log.ts";
export {
  createMemoryEventLog,
  type MemoryEventLogOptions,
} from "../store/memory-event-log.ts";
export {
  createSqliteEventLog,
  openEventLog,
  type SqliteEventLogOptions,
  type SqliteSynchronous,
} from "../store/sqlite-event-log.ts";
export {
  createSecretRedactor,
  createStreamRedactor,
  REDACTED,
  type SecretRedactor,
  type StreamRedactor,
} from "../core/secrets.ts";
export {
  createRedactingEventLog,
  type RedactingEventLog,
} from "../store/redacting-event-log.ts";
export {
  createSqliteSnapshotStore,
  type SessionSnapshotStore,
  type SqliteSnapshotStoreOptions,
  type StoredSnapshot,
} from "../store/session-snapshots.ts";
export {
  createDefaultEventRegistry,
  BUILTIN_EVENT_SCHEMAS,
} from "../store/events/index.ts";
export {
  createEventRegistry,
  type EventRegistry,
} from "../store/events/registry.ts";
export {
  EVENT_CATALOGUE,
  isArborEvent,
  isArborEventType,
  isEventOfType,
  ofType,
  arborEvents,
  onEventType,
  type ArborEvent,
  type ArborEventData,
  type ArborEventHandler,
  type ArborEventOf,
  type ArborEventType,
  type NarrowedEvent,
} from "../store/events/catalogue.ts";
export { upcastStoredEvent, storedTypeNames } from "../store/events/upcast.ts";
export {
  toAuditEvents,
  createAuditProjector,
  AUDIT_EVENT_TYPES,
  type AuditEvent,
  type AuditBase,
  type AuditUsage,
} from "../store/events/audit.ts";
export {
  sessionStreamId,
  sessionIdOfStream,
  sessionCreatedSchema,
  entryAppendedSchema,
  leafMovedSchema,
  SESSION_EVENT_SCHEMAS,
  type SessionSource,
  type SessionCreatedData,
  type EntryAppendedData,
  type LeafMovedData,
} from "../store/events/session-events.ts";
export {
  controlStreamId,
  controlRequestedSchema,
  controlEndedSchema,
  CONTROL_EVENT_SCHEMAS,
  type ControlRequest,
  type ControlAction,
} from "../store/events/control-events.ts";
export {
  taskStreamId,
  readTask,
  TASK_EVENT_TYPES,
  type TaskState,
  type TaskClaim,
} from "../store/task-queue.ts";
export { TASK_EVENT_SCHEMAS } from "../store/events/task-events.ts";
export {
  createPostgresEventLog,
  openPostgresEventLog,
  type PostgresEventLog,
  type PostgresEventLogOptions,
} from "../store/pg-event-log.ts";
export type { StreamLease, StreamOwnership } from "../store/stream-ownership.ts";
export {
  EventCorruptError,
  EventIdReusedError,
  EventSchemaError,
  LogClosedError,
  LogCommitError,
  LogFileReplacedError,
  LogSchemaError,
  type ArborErrorOptions,
} from "../core/errors.ts";

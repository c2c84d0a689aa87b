/**
 * `arbor-agent/log`: The event log: the `EventLog` contract, its SQLite and in-memory implementations, the redacting decorator, snapshots, and the event catalogue and registry.
 * @example
 * import { createSqliteEventLog } from "arbor-agent/log";
 * const log = createSqliteEventLog({ path: ".arbor/arbor.db" });
 */
export {
  type EventMetadata,
  type NewEvent,
  type StoredEvent,
  type ClearEvent,
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
} from "../store/in-memory/memory-event-log.ts";
export {
  createSqliteEventLog,
  openEventLog,
  type SqliteEventLogOptions,
  type SqliteSynchronous,
} from "../store/sqlite/sqlite-event-log.ts";
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
} from "../store/log/redacting-event-log.ts";
export {
  createSqliteSnapshotStore,
  type SessionSnapshotStore,
  type SqliteSnapshotStoreOptions,
  type StoredSnapshot,
} from "../store/session/session-snapshots.ts";
export {
  createDefaultEventRegistry,
  BUILTIN_EVENT_SCHEMAS,
} from "../store/events/index.ts";
export {
  createEventRegistry,
  type EventDurability,
  type EventRegistry,
  type RegisterOptions,
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
  type AuditElicitation,
} from "../store/events/audit.ts";
export { sessionAuditSource } from "../store/session/session-audit.ts";
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
export { BUDGET_EVENT_SCHEMAS } from "../store/events/budget-events.ts";
export { budgetLedgerOf, budgetStreamId, type BudgetAmounts, type BudgetLedger, type LedgerFold, type ScopeUse } from "../store/budget-ledger.ts";
export {
  createPostgresEventLog,
  openPostgresEventLog,
  type PostgresEventLog,
  type PostgresEventLogOptions,
} from "../store/postgres/pg-event-log.ts";
export type { StreamLease, StreamOwnership } from "../store/log/stream-ownership.ts";
export { type EncryptionOptions, type LogEncryption } from "../store/crypto/log-cipher.ts";
export { createLocalKeyProvider, type KeyProvider, type MaybePromise } from "../store/crypto/master-key.ts";
export type { RotationResult } from "../store/crypto/session-keys.ts";
export {
  DataKeyUnavailableError,
  EncryptionKeyError,
  EncryptionKeyMismatchError,
  EventCorruptError,
  EventIdReusedError,
  EventSchemaError,
  LogClosedError,
  LogCommitError,
  LogFileReplacedError,
  LogSchemaError,
  type ArborErrorOptions,
} from "../core/errors.ts";

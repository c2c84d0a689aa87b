/**
 * Typed errors thrown at Arbor's API edge: every one is an {@link ArborError} with a stable `code` (inside actors errors are data).
 * `ArborError.isInstance(e)` works across duplicate package copies (a `Symbol.for` marker), where `instanceof` would fail.
 */
const MARKER = Symbol.for("arbor.error");

/** Options shared by every Arbor error: an optional `cause` and structured `details`. */
export interface ArborErrorOptions {
  cause?: unknown;
  details?: Record<string, unknown>;
}

/**
 * Base class of every error Arbor throws. `code` is a stable, SCREAMING_SNAKE
 * identifier callers may switch on; `message` is for humans and may change.
 * @example
 * if (ArborError.isInstance(error) && error.code === "SESSION_BUSY") { ... }
 */
export class ArborError extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly [MARKER] = true;

  constructor(code: string, message: string, options: ArborErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
    Object.setPrototypeOf(this, new.target.prototype);
  }

  /** True for any Arbor error, even one from another copy of the package. */
  static isInstance(error: unknown): error is ArborError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

function defineError<C extends string>(code: C, name: string) {
  const cls = class extends ArborError {
    static readonly code: C = code;
    constructor(message: string, options: ArborErrorOptions = {}) {
      super(code, message, options);
    }
    static override isInstance(error: unknown): error is ArborError {
      return ArborError.isInstance(error) && error.code === code;
    }
  };
  Object.defineProperty(cls, "name", { value: name });
  return cls;
}

/**
 * An append's `expectedVersion` did not match the stream's version (code `EXPECTED_VERSION_CONFLICT`). Nothing was written. The message says when the
 * stream no longer exists (`actualVersion` 0 against an expected version): it was deleted after the writer read it.
 * @example
 * await log.append("session-abc", events, { expectedVersion: 3 }).catch((error) => {
 *   if (ExpectedVersionConflictError.isInstance(error)) console.log(error.actualVersion); // another writer was first
 * });
 */
export class ExpectedVersionConflictError extends ArborError {
  static readonly code = "EXPECTED_VERSION_CONFLICT";
  constructor(
    readonly streamId: string,
    readonly expectedVersion: string | number,
    readonly actualVersion: number,
  ) {
    super(
      ExpectedVersionConflictError.code,
      actualVersion === 0 && typeof expectedVersion === "number" && expectedVersion > 0
        ? `Stream "${streamId}" does not exist, but the append expected it at version ${expectedVersion}: it was deleted after it was read. Nothing was written.`
        : `Stream "${streamId}" is at version ${actualVersion}, but the append expected ${String(expectedVersion)}. Another writer appended first; reload and retry.`,
      { details: { streamId, expectedVersion, actualVersion } },
    );
  }
  static override isInstance(error: unknown): error is ExpectedVersionConflictError {
    return ArborError.isInstance(error) && error.code === ExpectedVersionConflictError.code;
  }
}

/**
 * An event failed its type's zod schema, or its type is unknown (code `EVENT_SCHEMA_INVALID`). Nothing was written.
 * @example
 * await log.append("s-1", [{ type: "run.started", data: {} }]).catch((error) => {
 *   if (EventSchemaError.isInstance(error)) console.error(error.message); // names the type and the failing field
 * });
 */
export const EventSchemaError = defineError("EVENT_SCHEMA_INVALID", "EventSchemaError");
/**
 * A known eventId was re-appended with a different payload (code `EVENT_ID_REUSED`).
 * @example
 * if (EventIdReusedError.isInstance(error)) console.error("event id reused with another payload:", error.details);
 */
export const EventIdReusedError = defineError("EVENT_ID_REUSED", "EventIdReusedError");
/**
 * A log file was written by an unknown (newer) schema version (code `LOG_SCHEMA_UNSUPPORTED`).
 * @example
 * try { createSqliteEventLog({ path: "from-a-newer-arbor.db" }); }
 * catch (error) { if (LogSchemaError.isInstance(error)) console.error("upgrade arbor-agent:", error.message); }
 */
export const LogSchemaError = defineError("LOG_SCHEMA_UNSUPPORTED", "LogSchemaError");
/**
 * A stored event's data or metadata is not valid JSON; the message and `details` name the stream, version, global position and field (code `EVENT_CORRUPT`). Nothing was changed.
 * @example
 * try { await log.readStream("session-abc"); }
 * catch (error) { if (EventCorruptError.isInstance(error)) console.error(error.details.streamId, error.details.version); }
 */
export const EventCorruptError = defineError("EVENT_CORRUPT", "EventCorruptError");
/**
 * A caller passed an invalid argument, e.g. an empty stream id or a negative limit; the message names it (code `INVALID_ARGUMENT`). Nothing was done.
 * @example
 * await log.readStream("").catch((error) => InvalidArgumentError.isInstance(error)); // true: the stream id is empty
 */
export const InvalidArgumentError = defineError("INVALID_ARGUMENT", "InvalidArgumentError");
/**
 * The event log could not commit (disk full, I/O error, lock wait past the busy timeout); the SQLite error is the `cause` (code `LOG_COMMIT_FAILED`). Nothing of the failed commit was written.
 * @example
 * await log.append(streamId, events).catch((error) => {
 *   if (LogCommitError.isInstance(error)) console.error("disk or lock problem:", error.cause);
 * });
 */
export const LogCommitError = defineError("LOG_COMMIT_FAILED", "LogCommitError");
/**
 * The SQLite log's file was deleted or replaced by another file while the log was open (code `LOG_FILE_REPLACED`); the commit that found it wrote nothing, and no later one writes.
 * @example
 * if (LogFileReplacedError.isInstance(error)) console.error("the log file was deleted or replaced; reopen it");
 */
export const LogFileReplacedError = defineError("LOG_FILE_REPLACED", "LogFileReplacedError");
/**
 * The log was closed before the operation (code `LOG_CLOSED`).
 * @example
 * await log.close();
 * await log.readStream("session-abc").catch((error) => LogClosedError.isInstance(error)); // true
 */
export const LogClosedError = defineError("LOG_CLOSED", "LogClosedError");
/**
 * `prompt()` while a run is active (code `SESSION_BUSY`); steer or follow up instead. Source: pi.
 * @example
 * try { await session.prompt("another question"); }
 * catch (error) { if (SessionBusyError.isInstance(error)) session.followUp("another question"); }
 */
export const SessionBusyError = defineError("SESSION_BUSY", "SessionBusyError");
/**
 * `resume()` found no run to continue (code `NOTHING_TO_RESUME`): the session's last run has ended, or it has none (`docs/durability.md`).
 * @example
 * await harness.resume(id).catch((error) => { if (!NothingToResumeError.isInstance(error)) throw error; });
 */
export const NothingToResumeError = defineError("NOTHING_TO_RESUME", "NothingToResumeError");
/**
 * `resume()` found the run owned by a live process whose lease has not expired (code `RUN_OWNED`); `details` carry `runId` and, when known,
 * `expiresAt` (ms since the epoch). Retry after the lease's TTL (`docs/durability.md`).
 * @example
 * await harness.resume(id).catch((error) => { if (RunOwnedError.isInstance(error)) setTimeout(retry, 5_000); });
 */
export const RunOwnedError = defineError("RUN_OWNED", "RunOwnedError");
/**
 * A writer that lost its run's lease tried to append (code `LEASE_LOST`): another process may have taken the run over, so nothing is written and the
 * run's tools are aborted (`docs/durability.md`, "Leases and fencing").
 * @example
 * if (outcome.code === LeaseLostError.code) console.log("another process took this run over");
 */
export const LeaseLostError = defineError("LEASE_LOST", "LeaseLostError");
/**
 * No session with that id (code `SESSION_NOT_FOUND`).
 * @example
 * const session = await repo.open(id).catch((error) => (SessionNotFoundError.isInstance(error) ? repo.create({ id }) : Promise.reject(error)));
 */
export const SessionNotFoundError = defineError("SESSION_NOT_FOUND", "SessionNotFoundError");
/**
 * No entry with that id in the session (code `ENTRY_NOT_FOUND`).
 * @example
 * await session.moveLeaf("no-such").catch((error) => EntryNotFoundError.isInstance(error)); // true
 */
export const EntryNotFoundError = defineError("ENTRY_NOT_FOUND", "EntryNotFoundError");
/**
 * A session file could not be imported: missing or corrupt header, unreadable file (code `SESSION_IMPORT_FAILED`).
 * @example
 * try { await importPiSession(repo, "broken.jsonl"); }
 * catch (error) { if (SessionImportError.isInstance(error)) console.error(error.message); }
 */
export const SessionImportError = defineError("SESSION_IMPORT_FAILED", "SessionImportError");
/**
 * A harness option failed validation; the message names the field (code `HARNESS_CONFIG_INVALID`).
 * @example
 * try { await createHarness({ streamOptions: { timeoutMs: -1 } }); }
 * catch (error) { if (HarnessConfigError.isInstance(error)) console.error(error.message); } // names the field
 */
export const HarnessConfigError = defineError("HARNESS_CONFIG_INVALID", "HarnessConfigError");
/**
 * A path resolved outside the execution root (code `PATH_ESCAPE`).
 * @example
 * await env.resolvePath("../../etc/passwd").catch((error) => PathEscapeError.isInstance(error)); // true
 */
export const PathEscapeError = defineError("PATH_ESCAPE", "PathEscapeError");
/**
 * An operation that is not allowed in the current state, e.g. `moveTo` while compacting (code `INVALID_STATE`).
 * @example
 * if (InvalidStateError.isInstance(error)) console.error("not now:", error.message);
 */
export const InvalidStateError = defineError("INVALID_STATE", "InvalidStateError");
/**
 * Compaction refused: nothing to compact, already compacted, cancelled (code `COMPACTION_REFUSED`).
 * @example
 * await session.compact().catch((error) => {
 *   if (CompactionError.isInstance(error)) console.log(error.message); // e.g. "Nothing to compact …"
 * });
 */
export const CompactionError = defineError("COMPACTION_REFUSED", "CompactionError");
/**
 * A compaction or branch summary could not be made: the summary model failed or the session changed underneath (code `COMPACTION_FAILED`). Nothing was appended.
 * @example
 * await session.compact().catch((error) => {
 *   if (CompactionFailedError.isInstance(error)) console.error("summary model failed:", error.cause);
 * });
 */
export const CompactionFailedError = defineError("COMPACTION_FAILED", "CompactionFailedError");
/**
 * A tool definition or tool input is invalid (code `TOOL_INVALID`).
 * @example
 * try { defineJsonSchemaTool({ name: "lookup", description: "", parameters: { type: 42 }, execute }); }
 * catch (error) { if (ToolDefinitionError.isInstance(error)) console.error(error.message); }
 */
export const ToolDefinitionError = defineError("TOOL_INVALID", "ToolDefinitionError");
/**
 * A model could not be resolved or configured (code `MODEL_CONFIG_INVALID`).
 * @example
 * try { createOpenAIModel({ modelId: "" }); }
 * catch (error) { if (ModelConfigError.isInstance(error)) console.error(error.message); }
 */
export const ModelConfigError = defineError("MODEL_CONFIG_INVALID", "ModelConfigError");
/**
 * A decision named a tool call that never asked for approval in this session (code `APPROVAL_NOT_FOUND`). Nothing was written. Ours.
 * @example
 * await session.approve("call_x").catch((error) => { if (ApprovalNotFoundError.isInstance(error)) console.log(error.details.toolCallId); });
 */
export const ApprovalNotFoundError = defineError("APPROVAL_NOT_FOUND", "ApprovalNotFoundError");
/**
 * A decision for a call whose approval already ended and whose result is recorded, or a decision that contradicts the recorded one (code `APPROVAL_CONFLICT`; `details.status` is the recorded status). Nothing was written. Ours.
 * @example
 * await session.deny("call_1", { reason: "no" }).catch((error) => { if (ApprovalConflictError.isInstance(error)) console.log(error.details.status); });
 */
export const ApprovalConflictError = defineError("APPROVAL_CONFLICT", "ApprovalConflictError");
/**
 * `continue()` while a gated call still waits for a decision (code `APPROVAL_PENDING`; `details.pending` lists the call ids). Ours.
 * @example
 * await session.continue().catch((error) => { if (ApprovalPendingError.isInstance(error)) console.log(error.details.pending); });
 */
export const ApprovalPendingError = defineError("APPROVAL_PENDING", "ApprovalPendingError");

/**
 * A workspace blob is missing from its tenant's store or does not match its sha256 name (code
 * `WORKSPACE_BLOB_INVALID`; `details.hash`, `details.tenant`). Nothing was restored.
 * @example
 * await session.workspace.restore(entryId).catch((error) => { if (WorkspaceBlobError.isInstance(error)) console.log(error.details.hash); });
 */
export const WorkspaceBlobError = defineError("WORKSPACE_BLOB_INVALID", "WorkspaceBlobError");

/**
 * A workspace checkpoint could not be taken (disk full, a quota, a store that refused the write; code `WORKSPACE_CHECKPOINT_FAILED`). The tool call's
 * result is not logged as a success: it becomes an error result naming the cause, and no `workspace.checkpointed` is written.
 * @example
 * if (WorkspaceCheckpointError.isInstance(error)) console.log(error.message);
 */
export const WorkspaceCheckpointError = defineError("WORKSPACE_CHECKPOINT_FAILED", "WorkspaceCheckpointError");

/**
 * The log's master key cannot be used (code `ENCRYPTION_KEY_INVALID`): it is not 32 bytes, or it is not the key that wrapped a session's data key (a
 * wrong key, never garbage: AES-256-GCM authentication fails). `details.masterKeyId` names the key the row was wrapped with.
 * @example
 * await log.readStream("session-abc").catch((error) => { if (EncryptionKeyError.isInstance(error)) console.log(error.details.masterKeyId); });
 */
export const EncryptionKeyError = defineError("ENCRYPTION_KEY_INVALID", "EncryptionKeyError");

/**
 * An encrypted log was opened with another master key than the one it was written with (code `ENCRYPTION_KEY_MISMATCH`), found at open by the key
 * check value of its key store; nothing was read or written. `details`: `log`, `keyStore`, `masterKeyId` (the key given), `storedMasterKeyId` (the key
 * the store is under).
 * @example
 * try { createSqliteEventLog({ path, encryption: { key } }); } catch (error) { if (EncryptionKeyMismatchError.isInstance(error)) console.log(error.details.log); }
 */
export const EncryptionKeyMismatchError = defineError("ENCRYPTION_KEY_MISMATCH", "EncryptionKeyMismatchError");

/**
 * An encrypted record whose data key is not there (code `DATA_KEY_UNAVAILABLE`): the session was deleted (its key destroyed: crypto-shredding), or
 * the log was opened without `encryption`. `details.keyId` is the session id, `details.reason` `"destroyed"` or `"no_encryption"`.
 * @example
 * if (DataKeyUnavailableError.isInstance(error)) console.log(error.details.reason);
 */
export const DataKeyUnavailableError = defineError("DATA_KEY_UNAVAILABLE", "DataKeyUnavailableError");

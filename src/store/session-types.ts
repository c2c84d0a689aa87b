/**
 * Contracts of the session projections and the session repository (ours, entry semantics pi's): a {@link SessionView} is updated per event, never
 * by re-reading the stream; `buildContext` repairs and reports instead of throwing on a broken tree; the leaf is the one the log says.
 */
import type { Observable } from "rxjs";
import type { SessionEntry } from "../core/entries.ts";
import type { AgentMessage, ThinkingLevel } from "../core/messages.ts";
import type { EventLog, EventMetadata, NewEvent, StoredEvent } from "./event-log.ts";
import type { LeaseOptions, StreamLease } from "./log/stream-ownership.ts";
import type { SessionCreatedData } from "./events/session-events.ts";
import type { ArborEvent } from "./events/catalogue.ts";
import type { AuditEvent } from "./events/audit.ts";
import type { SessionActivity } from "./session/session-activity.ts";

/** A problem found while building a context, repaired rather than thrown. */
export interface ContextDiagnostic {
  kind:
    | "missing_tool_result"
    | "orphan_tool_result"
    | "duplicate_tool_result"
    | "unknown_entry"
    | "missing_parent"
    | "parent_cycle"
    | "context_edit_unapplied";
  message: string;
  entryId?: string;
  toolCallId?: string;
}

/** The context sent to the model for one leaf. */
export interface SessionContext {
  leafId: string | null;
  messages: AgentMessage[];
  thinkingLevel: ThinkingLevel;
  model: { provider: string; modelId: string } | null;
  /** From the latest `active_tools_change` on the path; null = all tools. */
  activeToolNames: string[] | null;
  diagnostics: ContextDiagnostic[];
}

/** A node of {@link SessionView.getTree}. */
export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
}

/** Token and cost totals; `null` when no message reported that figure. */
export interface SessionStats {
  messages: { user: number; assistant: number; toolResult: number; custom: number; other: number; total: number };
  toolCalls: number;
  tokens: { input: number | null; output: number | null; cacheRead: number | null; cacheWrite: number | null; total: number | null };
  /** US dollars. */
  cost: number | null;
  /** Assistant messages whose usage was unknown. */
  unknownUsageMessages: number;
  /** pi 1.x `usage` entries (spend outside the context), counted in `tokens` and `cost`. */
  usageEntries: number;
}

/** The in-memory projection of one session. */
export interface SessionView {
  readonly sessionId: string;
  readonly info: SessionCreatedData;
  /** The stream version this view reflects. */
  readonly version: number;
  readonly leafId: string | null;
  readonly name: string | undefined;
  /**
   * The activity projection at {@link SessionView.version}: runs (open or settled, with status and owner), the steering / follow-up / passive queues,
   * approvals, open summary intents (`session-activity.ts`). Folded from the same events as the tree; read it instead of re-reading the stream.
   */
  readonly activity: SessionActivity;
  /** Folds one stored event of this session's stream (events must arrive in version order). */
  apply(event: StoredEvent): void;
  getEntry(id: string): SessionEntry | undefined;
  /** Children ordered by timestamp. */
  getChildren(id: string): SessionEntry[];
  /** Root-to-entry path (default: the leaf). Stops silently at a missing parent. */
  getBranch(fromId?: string | null): SessionEntry[];
  /** Roots (incl. orphans) with children ordered by time. */
  getTree(): SessionTreeNode[];
  /** All entries in append order. */
  getEntries(): SessionEntry[];
  getLabel(entryId: string): string | undefined;
  getStats(): SessionStats;
  /** Context for `leafId` (default: the current leaf). Incremental for the current leaf. */
  buildContext(options?: { leafId?: string | null }): SessionContext;
  /** Emits after every applied event. */
  readonly changes$: Observable<SessionView>;
}

/** Input of an entry to append; id, parentId and timestamp are filled in when absent. */
export type NewEntry = { type: string; id?: string; parentId?: string | null; timestamp?: string } & Record<string, unknown>;

/** A live session: its view plus writes through the log. */
export interface SessionHandle {
  readonly id: string;
  readonly view: SessionView;
  /**
   * Appends entries as children of the leaf, one after another (each becomes the new leaf), plus any extra events, in one atomic append checked
   * against the view's version. Returns the stored entries.
   */
  appendEntries(entries: NewEntry[], options?: { extraEvents?: NewEvent[]; metadata?: EventMetadata }): Promise<SessionEntry[]>;
  appendEntry(entry: NewEntry, options?: { metadata?: EventMetadata }): Promise<SessionEntry>;
  /** Appends raw events (e.g. run events) checked against the view's version. */
  appendEvents(events: NewEvent[]): Promise<StoredEvent[]>;
  /** Moves the leaf; throws EntryNotFoundError for an unknown id. */
  moveLeaf(leafId: string | null): Promise<void>;
  /**
   * Catch-up then live events of this session, typed as the catalogue union (events of user-registered types are left out; read them with
   * `log.subscribe`).
   */
  events$(options?: { fromVersion?: number }): Observable<ArborEvent>;
  /**
   * Catch-up then live content-free audit events of this session (`toAuditEvents`), its elicitations included: the session's events and those of
   * `elicitation-<id>`, in log order (`sessionAuditSource`).
   */
  auditEvents$(): Observable<AuditEvent>;
  /** Applies events others appended since the view's version (another handle, another process); returns how many. */
  refresh(): Promise<number>;
  /** One writer per session across processes, when the log offers it (`EventLog.ownership`: PostgreSQL, SQLite); absent on memory logs. */
  readonly ownership?: SessionOwnership;
}

/** {@link StreamOwnership} bound to one session's stream. */
export interface SessionOwnership {
  /** Takes the session; throws `SessionBusyError` while another live process holds it. */
  acquire(owner?: Record<string, unknown>, options?: LeaseOptions): Promise<StreamLease>;
  /** True while a live owner other than this log holds the session. */
  isOwnedElsewhere(): Promise<boolean>;
  /** See `StreamOwnership.fencesAppends`. */
  readonly fencesAppends: boolean;
  /** The fencing token this log holds, if it owns the session. */
  token(): number | undefined;
}

/** One row of {@link SessionRepository.list}. */
export interface SessionSummary {
  id: string;
  name?: string;
  cwd: string;
  /** ISO 8601. */
  created: string;
  modified: string;
  messageCount: number;
  firstMessage: string;
  parentSessionId?: string;
  /** The session's tenant (`"default"` for a session created without one). */
  tenant: string;
  /**
   * ISO 8601: when the last event was appended to the session's stream (a fork, a label or a leaf move counting, not only messages), as the log
   * records it; for an imported session nothing was appended to since its import, the time of its latest entry (`modified`: the session's own time,
   * not the import's).
   */
  updatedAt: string;
  /** With `list({ stats: true })`: the session's `getStats()` (every branch; tokens and cost). */
  stats?: SessionStats;
  /**
   * Set when the session's stored data does not read (`EVENT_CORRUPT`: an altered or lost event, or sealed data that does not authenticate): the
   * session cannot be opened, and every field but `id`, `tenant`, `created` (its first event's time in the log), `updatedAt` and `modified` (its last
   * event's) is a placeholder (`cwd` "", `messageCount` 0, `firstMessage` "(damaged)", no `stats`). Listed to its own tenant only. `arbor doctor` names
   * the damage.
   */
  damaged?: { code: string; message: string };
}

/** Creates, opens, lists, forks and deletes sessions in one event log. */
export interface SessionRepository {
  create(options?: { id?: string; cwd?: string; metadata?: Record<string, unknown>; tenant?: string }): Promise<SessionHandle>;
  /** Throws SessionNotFoundError. */
  open(id: string): Promise<SessionHandle>;
  /**
   * Newest first: by `updatedAt` (the last event appended to the stream), compared as times; on the same millisecond the stream that started later
   * first. The one order of `arbor sessions`, `GET /api/sessions` and the CLI's `latest`. With `stats: true` each row carries the session's
   * statistics; with `tenant`, only that tenant's sessions (on a repository scoped to another tenant: none). Reads the log's summary rows, not each
   * session's events, where the log keeps them (SQLite, PostgreSQL). A session whose stored data does not read is a row with `damaged` set, never an
   * error of the whole list, and only in its own tenant's list: another tenant's session is passed over by the tenant the log stores in clear
   * (`StreamInfo.tenant`) before any of its data is read, and a damaged session whose own first event does not read (so whose tenant cannot be
   * trusted) is listed only without a tenant filter.
   */
  list(options?: { stats?: boolean; tenant?: string }): Promise<SessionSummary[]>;
  /** Physically removes the session's events. Throws SessionNotFoundError. */
  delete(id: string): Promise<void>;
  /** A new session holding the path root→entryId (default: leaf), recording the parent session and entry. */
  fork(id: string, options?: { entryId?: string; newId?: string }): Promise<SessionHandle>;
  /** Creates a session holding `entries` (ids and parents kept), atomically: all or nothing. */
  importEntries(options: ImportEntriesOptions): Promise<SessionHandle>;
  /** The event log the repository reads and writes. */
  readonly log: EventLog;
}

/** Input of {@link SessionRepository.importEntries}. */
export interface ImportEntriesOptions {
  id?: string;
  cwd?: string;
  /** ISO 8601; default now. */
  createdAt?: string;
  metadata?: Record<string, unknown>;
  tenant?: string;
  parentSessionId?: string;
  parentEntryId?: string;
  source?: SessionCreatedData["source"];
  /** Entries in append order, with their ids and parents (kept as they are). */
  entries: SessionEntry[];
  /** Leaf after the import; default the last entry. */
  leafId?: string | null;
}


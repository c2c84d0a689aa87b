/**
 * The operation slot's types (ours, after pi's one `operation` per session): what holds a session's slot, and the {@link SessionActor} API over it.
 * Types only, so that public declarations (the agent API) can name them without pulling in xstate's declarations.
 */
import type { NewEvent } from "../store/event-log.ts";
import type { SessionWriter } from "./session-writer.ts";

/**
 * What holds a session's operation slot. `awaiting-approval` (ours): a run stopped for approval; the slot refuses prompts, compactions and
 * navigations until the gated calls are decided and a `continue()` resumes (or an `abort()` closes them).
 */
export type SessionOperation = "idle" | "preparing" | "running" | SlotWork | "awaiting-approval";

/** The operations `operate` runs in the slot (manual compaction, a move of the leaf). */
export type SlotWork = "compacting" | "navigating";

/** The operation slot of one session. */
export interface SessionActor {
  readonly sessionId: string;
  /** What holds the slot now. */
  operation(): SessionOperation;
  /** Runs `work` as the slot's compaction or navigation; `SessionBusyError` unless idle; `signal` aborts on `abort()`. */
  operate<T>(kind: SlotWork, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Aborts the run or operation holding the slot (no-op when idle). */
  abort(reason?: string): void;
  /**
   * The session's one writer for writes that are not a run's own (compaction and branch-summary entries, summary intents, custom entries and
   * messages, resources, leaf moves): prepared appends in writer order, after everything the run pushed (`session-writer.ts`). A refused append
   * rejects (and poisons the writer: the agent reloads at its next run).
   */
  readonly writes: SessionWrites;
}

/** The writes of the session writer: its prepared appends (`SessionWriter`'s `appendEntries`, `appendEvents`, `moveLeaf`) and `record`. */
export interface SessionWrites extends Pick<SessionWriter, "appendEntries" | "appendEvents" | "moveLeaf"> {
  /**
   * Records events as a run does (entries chained at commit time, group commit) and resolves once committed; rejects with the writer's failure.
   */
  record(events: NewEvent[]): Promise<void>;
}

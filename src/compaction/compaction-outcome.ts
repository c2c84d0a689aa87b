/**
 * The compaction actor's input and output shapes, apart from the machine (`compaction.machine.ts`) so that the public `arbor-agent/compaction`
 * declarations never load xstate's (see test/package/public-types.test.ts).
 */
import type { CompactionEntry } from "../core/entries.ts";
import type { ThinkingLevel } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { FileToolNames } from "./file-ops.ts";
import type { CompactionHookCallbacks, CompactionReason } from "./hook-types.ts";
import type { CompactionPreparation } from "./prepare.ts";

/** Input of the compaction actor. Token figures in tokens. */
export interface CompactionInput {
  session: SessionHandle;
  /** Model that writes the summary (the session's or the summarization model). */
  model: ModelClient;
  reserveTokens: number;
  keepRecentTokens: number;
  reason: CompactionReason;
  customInstructions?: string;
  thinkingLevel?: ThinkingLevel;
  hooks?: CompactionHookCallbacks;
  fileToolNames?: FileToolNames;
}

/**
 * Why a compaction failed.
 * @example
 * if (outcome.status === "failed" && outcome.reason === "nothing_to_compact") return;
 */
export type CompactionFailureReason =
  | "empty"
  | "already_compacted"
  | "nothing_to_compact"
  | "tool_batch_in_flight"
  | "summary_failed"
  | "hook_failed"
  | "hook_invalid"
  | "session_changed"
  | "append_failed";

/**
 * The actor's output.
 * @example
 * const outcome: CompactionOutcome = await toPromise(createActor(compactionMachine, { input }).start());
 */
export type CompactionOutcome =
  | { status: "appended"; entry: CompactionEntry; fromHook: boolean; preparation: CompactionPreparation }
  | { status: "cancelled"; reason: "aborted" | "hook" }
  | { status: "failed"; reason: CompactionFailureReason; message: string };

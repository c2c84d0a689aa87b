/**
 * Running a compaction: `compact()` runs in the session's slot as `compacting` (`SessionBusyError` otherwise) and returns the entry or throws
 * `CompactionError` (`COMPACTION_REFUSED`, `details.reason`) / `CompactionFailedError`; `runCompaction()` is the work itself for callers holding the
 * slot, returning a {@link CompactionOutcome} (throws only `HarnessConfigError`). Summary maxTokens = floor(0.8 × reserveTokens); an abort appends
 * nothing.
 */
import { createActor, toPromise } from "xstate";
import type { CompactionEntry } from "../core/entries.ts";
import { CompactionError, CompactionFailedError } from "../core/errors.ts";
import type { ThinkingLevel } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { CompactionOutcome } from "./compaction-outcome.ts";
import { compactionMachine } from "./compaction.machine.ts";
import type { FileToolNames } from "./file-ops.ts";
import type { CompactionHookCallbacks, CompactionReason } from "./hook-types.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import {
  type CompactionSettings,
  type CompactionSettingsInput,
  effectiveKeepRecentTokens,
  resolveCompactionSettings,
  resolveContextWindow,
} from "./settings.ts";
import { ignored } from "../core/ignored.ts";

/**
 * Options of {@link compact} and {@link runCompaction}.
 * @example
 * const options: CompactOptions = { model, settings: { keepRecentTokens: 8000 }, customInstructions: "keep SQL" };
 */
export interface CompactOptions {
  /** The session's model (used for the summary unless settings name a summarization model). */
  model: ModelClient;
  settings?: CompactionSettingsInput;
  /** Extra focus for the summary ("Additional focus: …"). */
  customInstructions?: string;
  /** Default `"manual"`. */
  reason?: CompactionReason;
  /** Passed to reasoning models. */
  thinkingLevel?: ThinkingLevel;
  hooks?: CompactionHookCallbacks;
  signal?: AbortSignal;
  /** Overrides the keep-recent budget (tokens), e.g. a tighter one for overflow recovery. */
  keepRecentTokens?: number;
  fileToolNames?: FileToolNames;
  /** Observes the actor's emitted events (`compactionStarted`, `.appended`, `.cancelled`, `.failed`). */
  onEvent?: (event: { type: string; [key: string]: unknown }) => void;
}

/** The newest tokens a compaction keeps as they are: the option, else the settings' value capped at half the model's window. */
function keepRecentTokensOf(options: CompactOptions, settings: CompactionSettings): number {
  return options.keepRecentTokens ?? effectiveKeepRecentTokens(settings, resolveContextWindow(settings, options.model));
}

/**
 * Runs one compaction of the session's current leaf, for a caller that holds the session's
 * operation slot (a run's hooks, {@link compact}). Only invalid `settings` throw (`HarnessConfigError`).
 * @example
 * const outcome = await runCompaction(session, { model, reason: "threshold" });
 * if (outcome.status === "appended") console.log(outcome.entry.id);
 */
export async function runCompaction(session: SessionHandle, options: CompactOptions): Promise<CompactionOutcome> {
  const settings: CompactionSettings = resolveCompactionSettings(options.settings);
  const keepRecentTokens = keepRecentTokensOf(options, settings);
  const actor = createActor(compactionMachine, {
    input: {
      session,
      model: settings.summarizationModel ?? options.model,
      reserveTokens: settings.reserveTokens,
      keepRecentTokens,
      reason: options.reason ?? "manual",
      customInstructions: options.customInstructions,
      thinkingLevel: options.thinkingLevel,
      hooks: options.hooks,
      fileToolNames: options.fileToolNames,
    },
  });
  const onAbort = () => actor.send({ type: "ABORT" });
  try {
    if (options.onEvent) actor.on("*", (event) => options.onEvent!(event as { type: string }));
    const done = toPromise(actor);
    actor.start();
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    const outcome = await done;
    if (outcome.status === "appended" && options.hooks?.sessionCompact) {
      try {
        await options.hooks.sessionCompact({ compactionEntry: outcome.entry, fromHook: outcome.fromHook, reason: options.reason ?? "manual" });
      } catch (error) {
        ignored("a sessionCompact observer threw; it cannot undo a stored compaction", error);
      }
    }
    return outcome;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Compacts the session now (pi's manual `/compact`). See the module contract for the errors thrown.
 * @example
 * await compact(session, { model, customInstructions: "focus on the DB schema" });
 */
export async function compact(session: SessionHandle, options: CompactOptions): Promise<CompactionEntry> {
  const outcome = await sessionActorOf(session).operate("compacting", (signal) =>
    runCompaction(session, { ...options, signal: options.signal ? AbortSignal.any([options.signal, signal]) : signal }),
  );
  switch (outcome.status) {
    case "appended":
      return outcome.entry;
    case "cancelled":
      throw new CompactionError(outcome.reason === "hook" ? "Compaction cancelled by a sessionBeforeCompact hook." : "Compaction aborted; the session is unchanged.", {
        details: { reason: outcome.reason === "hook" ? "cancelled" : "aborted" },
      });
    case "failed":
      if (outcome.reason === "empty" || outcome.reason === "already_compacted" || outcome.reason === "nothing_to_compact" || outcome.reason === "tool_batch_in_flight") {
        // The tokens kept as they are, as this compaction used them (a larger setting is capped at half the window).
        throw new CompactionError(outcome.message, { details: { reason: outcome.reason, keepRecentTokens: keepRecentTokensOf(options, resolveCompactionSettings(options.settings)) } });
      }
      throw new CompactionFailedError(outcome.message, { details: { reason: outcome.reason } });
  }
}

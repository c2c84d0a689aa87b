/**
 * Running a compaction: the manual `compact()` API and `runCompaction()` used by
 * the between-turns and overflow hooks.
 *
 * Contract (ours; pi's manual compact errors, `docs/pi-parity.md`):
 * - `compact` runs in the session's operation slot as `compacting`
 *   (`src/machines/session-actor.ts`): refused with `SessionBusyError` while a run, a
 *   navigation or another compaction holds it; while it runs, `moveTo` and `prompt` are
 *   refused; `runCompaction` is the work itself, for callers that already hold the slot
 *   (the run's between-turns and overflow hooks);
 * - the summary model is `settings.summarizationModel` if set, else `model`;
 *   maxTokens = floor(0.8 × reserveTokens);
 * - the keep-recent budget is `keepRecentTokens`, capped at half the room below
 *   the threshold when the model's window is known (`effectiveKeepRecentTokens`);
 * - `signal` (or `abort()` on the session) aborts: the outcome is `cancelled` and no entry
 *   is appended (the summary call's `summary.started` / `summary.ended` are logged);
 * - `runCompaction` returns a {@link CompactionOutcome} for everything that can go
 *   wrong while compacting; it throws only `HarnessConfigError` for invalid `settings`;
 * - `compact` returns the appended entry or throws: `CompactionError`
 *   (`COMPACTION_REFUSED`: nothing to compact, already compacted, a tool batch in
 *   flight, cancelled by a hook or aborted; `details.reason` says which), `CompactionFailedError`
 *   (`COMPACTION_FAILED`: the summary call failed, a hook threw or supplied an
 *   invalid compaction, the session changed meanwhile), `SessionBusyError` (the slot is
 *   not idle);
 * - `sessionCompact` is called after the entry is stored; its errors are ignored.
 *
 * @example
 * ```ts
 * const entry = await compact(session, { model, customInstructions: "keep the failing test names" });
 * console.log(entry.tokensBefore, entry.firstKeptEntryId);
 * ```
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

/**
 * Options of {@link compact} and {@link runCompaction}.
 *
 * @example
 * ```ts
 * const options: CompactOptions = { model, settings: { keepRecentTokens: 8000 }, customInstructions: "keep SQL" };
 * ```
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

/**
 * Runs one compaction of the session's current leaf, for a caller that holds the session's
 * operation slot (a run's hooks, {@link compact}). Only invalid `settings` throw (`HarnessConfigError`).
 *
 * @example
 * ```ts
 * const outcome = await runCompaction(session, { model, reason: "threshold" });
 * if (outcome.status === "appended") console.log(outcome.entry.id);
 * ```
 */
export async function runCompaction(session: SessionHandle, options: CompactOptions): Promise<CompactionOutcome> {
  const settings: CompactionSettings = resolveCompactionSettings(options.settings);
  const window = resolveContextWindow(settings, options.model);
  const keepRecentTokens = options.keepRecentTokens ?? effectiveKeepRecentTokens(settings, window);
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
      } catch {
        // Observers cannot undo a stored compaction; their errors are ignored by contract.
      }
    }
    return outcome;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Compacts the session now (pi's manual `/compact`). See the module contract for
 * the errors thrown.
 *
 * @example
 * ```ts
 * await compact(session, { model, customInstructions: "focus on the DB schema" });
 * ```
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
        throw new CompactionError(outcome.message, { details: { reason: outcome.reason } });
      }
      throw new CompactionFailedError(outcome.message, { details: { reason: outcome.reason } });
  }
}

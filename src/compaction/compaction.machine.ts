/**
 * The compaction actor: preparing → summarizing → appending → appended, or cancelled / failed; one run compacts one session once. The summary
 * intent is committed before the model call; ONE `compaction` entry is appended as a child of the leaf it was prepared from (else `session_changed`),
 * never while a tool batch is in flight. `ABORT` before appending means `cancelled` with entries unchanged. The output is a
 * {@link CompactionOutcome}; the actor never errors.
 */
import { assign, emit, fromPromise, setup } from "xstate";
import type { CompactionEntry, SessionEntry } from "../core/entries.ts";
import type { Usage } from "../core/messages.ts";
import { checkFirstKept, pendingToolCalls } from "./path-checks.ts";
import type { BeforeCompactResult, CompactionReason } from "./hook-types.ts";
import { type CompactionPreparation, prepareCompaction } from "./prepare.ts";
import { summarizeCompaction } from "./summarize.ts";
import { startSummaryIntent, type SummaryIntent } from "./summary-intent.ts";
import { generateEntryId } from "../store/session/session-handle.ts";
import type { CompactionFailureReason, CompactionInput, CompactionOutcome } from "./compaction-outcome.ts";
import { sessionActorOf } from "../machines/session-actor.ts";

interface Ready {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  usage?: Usage;
  fromHook: boolean;
  /** The logged intent of the summary model call (absent when a hook supplied the summary). */
  intent?: SummaryIntent;
}

interface Context {
  input: CompactionInput;
  /** Aborts the summary call; `ABORT` in `summarizing` fires it and waits for the call to end (so its intent is closed first). */
  abort: AbortController;
  preparation?: CompactionPreparation;
  ready?: Ready;
  outcome?: CompactionOutcome;
}

type Failure = { failure: { reason: CompactionFailureReason; message: string } } | { cancelled: "aborted" | "hook" };

class OutcomeSignal extends Error {
  constructor(readonly value: Failure) {
    super("compaction outcome");
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

function refuseInFlight(path: readonly SessionEntry[]): void {
  const pending = pendingToolCalls(path);
  if (pending.length > 0) {
    throw new OutcomeSignal({
      failure: {
        reason: "tool_batch_in_flight",
        message: `A tool batch is in flight (no result yet for ${pending.join(", ")}); a compaction now would separate calls from their results. Nothing was appended.`,
      },
    });
  }
}

async function prepareStep(input: CompactionInput, signal: AbortSignal): Promise<{ preparation: CompactionPreparation; ready?: Ready }> {
  const path = input.session.view.getBranch();
  refuseInFlight(path);
  const prepared = prepareCompaction(path, { keepRecentTokens: input.keepRecentTokens, reserveTokens: input.reserveTokens }, { fileToolNames: input.fileToolNames });
  if (!prepared.ok) throw new OutcomeSignal({ failure: { reason: prepared.reason, message: prepared.message } });
  const preparation = prepared.preparation;
  let verdict: BeforeCompactResult | undefined | void;
  if (input.hooks?.sessionBeforeCompact) {
    try {
      verdict = await input.hooks.sessionBeforeCompact({
        preparation,
        branchEntries: path,
        customInstructions: input.customInstructions,
        reason: input.reason,
        signal,
      });
    } catch (error) {
      throw new OutcomeSignal({ failure: { reason: "hook_failed", message: `sessionBeforeCompact threw: ${message(error)}` } });
    }
  }
  if (signal.aborted) throw new OutcomeSignal({ cancelled: "aborted" });
  if (verdict?.cancel) throw new OutcomeSignal({ cancelled: "hook" });
  const supplied = verdict?.compaction;
  if (!supplied) return { preparation };
  if (typeof supplied.summary !== "string" || supplied.summary.trim() === "") {
    throw new OutcomeSignal({ failure: { reason: "hook_invalid", message: "sessionBeforeCompact supplied a compaction with an empty summary" } });
  }
  const firstKeptEntryId = supplied.firstKeptEntryId ?? preparation.firstKeptEntryId;
  const problem = checkFirstKept(path, firstKeptEntryId);
  if (problem) throw new OutcomeSignal({ failure: { reason: "hook_invalid", message: `sessionBeforeCompact supplied an invalid compaction: ${problem}` } });
  return {
    preparation,
    ready: {
      summary: supplied.summary,
      firstKeptEntryId,
      tokensBefore: supplied.tokensBefore ?? preparation.tokensBefore,
      details: supplied.details,
      fromHook: true,
    },
  };
}

async function summarizeStep(input: CompactionInput, preparation: CompactionPreparation, signal: AbortSignal): Promise<Ready> {
  let intent: SummaryIntent;
  try {
    intent = await startSummaryIntent(input.session, "compaction", input.reason);
  } catch (error) {
    throw new OutcomeSignal({ failure: { reason: "append_failed", message: `Logging the compaction's intent failed, so the summary model was not called: ${message(error)}` } });
  }
  try {
    return { ...(await callSummaryModel(input, preparation, signal)), intent };
  } catch (error) {
    const outcome = toOutcome(error);
    await intent.end(outcome.status === "cancelled" ? "cancelled" : "failed", outcome.status === "failed" ? outcome.message : outcome.status === "cancelled" ? outcome.reason : undefined);
    throw error;
  }
}

async function callSummaryModel(input: CompactionInput, preparation: CompactionPreparation, signal: AbortSignal): Promise<Ready> {
  const result = await summarizeCompaction(preparation, {
    model: input.model,
    signal,
    thinkingLevel: input.thinkingLevel,
    customInstructions: input.customInstructions,
  });
  if (!result.ok) {
    if (result.aborted || signal.aborted) throw new OutcomeSignal({ cancelled: "aborted" });
    throw new OutcomeSignal({ failure: { reason: "summary_failed", message: result.message } });
  }
  return {
    summary: result.value.summary,
    firstKeptEntryId: preparation.firstKeptEntryId,
    tokensBefore: preparation.tokensBefore,
    details: result.value.details,
    usage: result.value.usage,
    fromHook: false,
  };
}

async function appendStep(input: CompactionInput, preparation: CompactionPreparation, ready: Ready): Promise<CompactionEntry> {
  try {
    return await appendSummary(input, preparation, ready);
  } catch (error) {
    const outcome = toOutcome(error);
    await ready.intent?.end("failed", outcome.status === "failed" ? outcome.message : undefined);
    throw error;
  }
}

async function appendSummary(input: CompactionInput, preparation: CompactionPreparation, ready: Ready): Promise<CompactionEntry> {
  const { session } = input;
  if (session.view.leafId !== preparation.preparedLeafId) {
    throw new OutcomeSignal({
      failure: {
        reason: "session_changed",
        message: `The session moved on while compacting (leaf ${String(session.view.leafId)}, prepared from ${preparation.preparedLeafId}); nothing was appended.`,
      },
    });
  }
  refuseInFlight(session.view.getBranch());
  const keptFrom = preparation.keptEntryIds.indexOf(ready.firstKeptEntryId);
  try {
    const id = generateEntryId((candidate) => session.view.getEntry(candidate) !== undefined);
    // Through the session's one writer (after whatever the run pushed before it).
    const [entry] = await sessionActorOf(session).writes.appendEntries([{
      type: "compaction",
      id,
      parentId: preparation.preparedLeafId,
      summary: ready.summary,
      firstKeptEntryId: ready.firstKeptEntryId,
      tokensBefore: ready.tokensBefore,
      ...(keptFrom >= 0 ? { retainedTail: preparation.keptEntryIds.slice(keptFrom) } : {}),
      ...(ready.details !== undefined ? { details: ready.details } : {}),
      ...(ready.usage ? { usage: ready.usage } : {}),
      ...(ready.fromHook ? { fromHook: true } : {}),
    }], ready.intent ? { extraEvents: [ready.intent.appended(id)] } : undefined);
    return entry as CompactionEntry;
  } catch (error) {
    throw new OutcomeSignal({ failure: { reason: "append_failed", message: `Appending the compaction failed: ${message(error)}` } });
  }
}

const toOutcome = (error: unknown): CompactionOutcome => {
  if (error instanceof OutcomeSignal) {
    const value = error.value;
    return "cancelled" in value ? { status: "cancelled", reason: value.cancelled } : { status: "failed", ...value.failure };
  }
  return { status: "failed", reason: "summary_failed", message: message(error) };
};

/** The compaction state machine (see the module contract). */
export const compactionMachine = setup({
  types: {
    context: {} as Context,
    input: {} as CompactionInput,
    output: {} as CompactionOutcome,
    events: {} as { type: "ABORT" },
    emitted: {} as
      | { type: "compactionStarted"; reason: CompactionReason }
      | { type: "compactionAppended"; entry: CompactionEntry; fromHook: boolean }
      | { type: "compactionCancelled"; reason: "aborted" | "hook" }
      | { type: "compactionFailed"; reason: CompactionFailureReason; message: string },
  },
  actors: {
    prepare: fromPromise<{ preparation: CompactionPreparation; ready?: Ready }, CompactionInput>(({ input, signal }) => prepareStep(input, signal)),
    summarize: fromPromise<Ready, { input: CompactionInput; preparation: CompactionPreparation; abort: AbortSignal }>(({ input, signal }) =>
      summarizeStep(input.input, input.preparation, AbortSignal.any([signal, input.abort])),
    ),
    append: fromPromise<CompactionEntry, { input: CompactionInput; preparation: CompactionPreparation; ready: Ready }>(({ input }) =>
      appendStep(input.input, input.preparation, input.ready),
    ),
  },
  guards: {
    isCancel: (_, params: { error: unknown }) => params.error instanceof OutcomeSignal && "cancelled" in params.error.value,
  },
  actions: {
    fail: assign({ outcome: (_, params: { error: unknown }) => toOutcome(params.error) }),
  },
}).createMachine({
  id: "compaction",
  context: ({ input }) => ({ input, abort: new AbortController() }),
  initial: "preparing",
  entry: emit(({ context }) => ({ type: "compactionStarted" as const, reason: context.input.reason })),
  states: {
    preparing: {
      invoke: {
        src: "prepare",
        input: ({ context }) => context.input,
        onDone: [
          {
            guard: ({ event }) => event.output.ready !== undefined,
            target: "appending",
            actions: assign({ preparation: ({ event }) => event.output.preparation, ready: ({ event }) => event.output.ready }),
          },
          { target: "summarizing", actions: assign({ preparation: ({ event }) => event.output.preparation }) },
        ],
        onError: [
          { guard: { type: "isCancel", params: ({ event }) => ({ error: event.error }) }, target: "cancelled", actions: { type: "fail", params: ({ event }) => ({ error: event.error }) } },
          { target: "failed", actions: { type: "fail", params: ({ event }) => ({ error: event.error }) } },
        ],
      },
      on: { ABORT: { target: "cancelled", actions: assign({ outcome: { status: "cancelled", reason: "aborted" } }) } },
    },
    summarizing: {
      invoke: {
        src: "summarize",
        input: ({ context }) => ({ input: context.input, preparation: context.preparation!, abort: context.abort.signal }),
        onDone: { target: "appending", actions: assign({ ready: ({ event }) => event.output }) },
        onError: [
          { guard: { type: "isCancel", params: ({ event }) => ({ error: event.error }) }, target: "cancelled", actions: { type: "fail", params: ({ event }) => ({ error: event.error }) } },
          { target: "failed", actions: { type: "fail", params: ({ event }) => ({ error: event.error }) } },
        ],
      },
      // The call is aborted and awaited: its `summary.ended { cancelled }` is logged before the machine ends.
      on: { ABORT: { actions: ({ context }) => context.abort.abort() } },
    },
    appending: {
      invoke: {
        src: "append",
        input: ({ context }) => ({ input: context.input, preparation: context.preparation!, ready: context.ready! }),
        onDone: {
          target: "appended",
          actions: assign({
            outcome: ({ context, event }) => ({ status: "appended" as const, entry: event.output, fromHook: context.ready!.fromHook, preparation: context.preparation! }),
          }),
        },
        onError: [
          { guard: { type: "isCancel", params: ({ event }) => ({ error: event.error }) }, target: "cancelled", actions: { type: "fail", params: ({ event }) => ({ error: event.error }) } },
          { target: "failed", actions: { type: "fail", params: ({ event }) => ({ error: event.error }) } },
        ],
      },
    },
    appended: {
      type: "final",
      entry: emit(({ context }) => {
        const outcome = context.outcome as Extract<CompactionOutcome, { status: "appended" }>;
        return { type: "compactionAppended" as const, entry: outcome.entry, fromHook: outcome.fromHook };
      }),
    },
    cancelled: {
      type: "final",
      entry: emit(({ context }) => ({
        type: "compactionCancelled" as const,
        reason: (context.outcome as Extract<CompactionOutcome, { status: "cancelled" }>).reason,
      })),
    },
    failed: {
      type: "final",
      entry: emit(({ context }) => {
        const outcome = context.outcome as Extract<CompactionOutcome, { status: "failed" }>;
        return { type: "compactionFailed" as const, reason: outcome.reason, message: outcome.message };
      }),
    },
  },
  output: ({ context }) => context.outcome!,
});

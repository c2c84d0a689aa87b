/**
 * `createCompactionHooks`: the agent loop hooks that compact between turns and
 * recover from a context overflow.
 *
 * Contract (ours; fixes pi #1796, whose threshold is checked only at run end):
 * - `betweenTurns` runs after every turn that will be followed by another model
 *   call, after the tool batch has settled and been written (so a compaction entry
 *   is never appended while a tool batch is in flight); if automatic compaction is
 *   enabled, the model's window is known and the context (last usable usage +
 *   estimates after it) exceeds window − reserveTokens, it compacts and returns the
 *   compacted context; the run then goes on;
 * - `onContextOverflow` runs when the provider said the context is too long; it
 *   compacts (keeping at most half of the current estimate, so something is always
 *   cut) and returns the compacted context for one retry; the run actor allows one
 *   retry per run, so a second overflow fails the run;
 * - a refused, cancelled or failed compaction returns `undefined` (errors are data:
 *   the run goes on, or for an overflow fails with the provider's message) and is
 *   reported through `onEvent`; these hooks never throw;
 * - `model` and `thinkingLevel` may be functions, read at each call (the agent's
 *   model can change); `settings.summarizationModel` writes the summary when set;
 * - {@link compactIfNeeded} is the same threshold check on the session's current
 *   context, for a harness to call before a new prompt (pi checks at every prompt);
 * - usage reported before the latest compaction is ignored (pi's stale-usage rule);
 * - throws `HarnessConfigError` at creation when `reserveTokens` does not leave room
 *   in a configured numeric `contextWindow`.
 *
 * @example
 * ```ts
 * const agent = createAgent({ session, model, hooks: { ...createCompactionHooks({ session, model, settings: { contextWindow: 128_000 } }) } });
 * ```
 */
import { HarnessConfigError } from "../core/errors.ts";
import type { AgentMessage, ThinkingLevel } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { LoopHooks } from "../machines/agent-types.ts";
import { sessionActorOf } from "../machines/session-actor.ts";
import type { SessionHandle } from "../store/session-types.ts";
import { runCompaction } from "./compact.ts";
import type { FileToolNames } from "./file-ops.ts";
import type { CompactionHookCallbacks, CompactionReason } from "./hook-types.ts";
import { type CompactionSettingsInput, effectiveKeepRecentTokens, resolveCompactionSettings, resolveContextWindow } from "./settings.ts";
import { estimateFreshContextTokens, shouldCompact } from "./tokens.ts";
import type { CompactionOutcome } from "./compaction-outcome.ts";

/**
 * What the hooks report (ours).
 *
 * @example
 * ```ts
 * const log = (event: CompactionHookEvent) => console.log(event.type, event.reason);
 * ```
 */
export type CompactionHookEvent =
  | { type: "compactionChecked"; reason: CompactionReason; contextTokens: number; contextWindow: number; threshold: number; compacting: boolean }
  | { type: "compactionAppended"; reason: CompactionReason; entryId: string; tokensBefore: number }
  | { type: "compactionSkipped"; reason: CompactionReason; status: "cancelled" | "failed"; detail: string };

/**
 * Options of {@link createCompactionHooks}.
 *
 * @example
 * ```ts
 * const options: CompactionHooksOptions = { session, model, settings: { contextWindow: 128_000 } };
 * ```
 */
export interface CompactionHooksOptions {
  session: SessionHandle;
  /** The session's model, or a function returning the current one. */
  model: ModelClient | (() => ModelClient);
  settings?: CompactionSettingsInput;
  /** sessionBeforeCompact / sessionCompact callbacks (e.g. the harness's hook runner). */
  hooks?: CompactionHookCallbacks;
  thinkingLevel?: ThinkingLevel | (() => ThinkingLevel | undefined);
  fileToolNames?: FileToolNames;
  onEvent?: (event: CompactionHookEvent) => void;
}

/**
 * Creates `betweenTurns` and `onContextOverflow` for `AgentOptions.hooks`.
 *
 * @example
 * ```ts
 * const hooks = createCompactionHooks({ session, model, settings: { reserveTokens: 8192 }, onEvent: console.log });
 * ```
 */
export function createCompactionHooks(options: CompactionHooksOptions): Required<Pick<LoopHooks, "betweenTurns" | "onContextOverflow">> {
  const settings = resolveCompactionSettings(options.settings);
  if (typeof settings.contextWindow === "number" && settings.contextWindow <= settings.reserveTokens) {
    throw new HarnessConfigError(
      `compaction.reserveTokens (${settings.reserveTokens}) must be smaller than compaction.contextWindow (${settings.contextWindow}).`,
    );
  }
  const currentModel = () => (typeof options.model === "function" ? options.model() : options.model);
  const currentThinking = () => (typeof options.thinkingLevel === "function" ? options.thinkingLevel() : options.thinkingLevel);
  const report = (event: CompactionHookEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // A throwing observer must not break the run.
    }
  };

  const compactNow = async (reason: CompactionReason, keepRecentTokens: number, signal: AbortSignal): Promise<AgentMessage[] | undefined> => {
    const outcome = await runCompaction(options.session, {
      model: currentModel(),
      settings: options.settings,
      reason,
      keepRecentTokens,
      thinkingLevel: currentThinking(),
      hooks: options.hooks,
      signal,
      fileToolNames: options.fileToolNames,
    });
    if (outcome.status === "appended") {
      report({ type: "compactionAppended", reason, entryId: outcome.entry.id, tokensBefore: outcome.entry.tokensBefore });
      return options.session.view.buildContext().messages;
    }
    report({
      type: "compactionSkipped",
      reason,
      status: outcome.status,
      detail: outcome.status === "failed" ? outcome.message : `cancelled (${outcome.reason})`,
    });
    return undefined;
  };

  return {
    async betweenTurns({ messages, signal }) {
      if (!settings.enabled) return undefined;
      const model = currentModel();
      const window = resolveContextWindow(settings, model);
      if (window === undefined) return undefined;
      const contextTokens = estimateFreshContextTokens(messages).tokens;
      const compacting = shouldCompact(contextTokens, window, settings);
      report({ type: "compactionChecked", reason: "threshold", contextTokens, contextWindow: window, threshold: window - settings.reserveTokens, compacting });
      if (!compacting) return undefined;
      return compactNow("threshold", effectiveKeepRecentTokens(settings, window), signal);
    },
    async onContextOverflow({ messages, signal }) {
      if (!settings.enabled) return undefined;
      const window = resolveContextWindow(settings, currentModel());
      const estimate = estimateFreshContextTokens(messages).tokens;
      const keep = Math.max(1, Math.min(effectiveKeepRecentTokens(settings, window), Math.floor(estimate / 2)));
      return compactNow("overflow", keep, signal);
    },
  };
}

/**
 * Compacts the session if its current context is over the threshold (pi's check at
 * the start of every prompt). Returns the outcome, or undefined when no compaction
 * was needed (disabled, window unknown, under the threshold). Never throws.
 *
 * @example
 * ```ts
 * await compactIfNeeded({ session, model, settings });
 * await agent.prompt(text);
 * ```
 */
export async function compactIfNeeded(options: CompactionHooksOptions & { signal?: AbortSignal }): Promise<CompactionOutcome | { status: "failed"; reason: "busy"; message: string } | undefined> {
  const settings = resolveCompactionSettings(options.settings);
  if (!settings.enabled) return undefined;
  const model = typeof options.model === "function" ? options.model() : options.model;
  const window = resolveContextWindow(settings, model);
  if (window === undefined) return undefined;
  const tokens = estimateFreshContextTokens(options.session.view.buildContext().messages).tokens;
  if (!shouldCompact(tokens, window, settings)) return undefined;
  const slot = sessionActorOf(options.session);
  if (slot.operation() !== "idle") {
    return { status: "failed", reason: "busy", message: `Session ${options.session.id} is busy (${slot.operation()}); not compacting now.` };
  }
  return slot.operate("compacting", (signal) => runCompaction(options.session, {
    model,
    settings: options.settings,
    reason: "threshold",
    keepRecentTokens: effectiveKeepRecentTokens(settings, window),
    thinkingLevel: typeof options.thinkingLevel === "function" ? options.thinkingLevel() : options.thinkingLevel,
    hooks: options.hooks,
    signal: options.signal ? AbortSignal.any([options.signal, signal]) : signal,
    fileToolNames: options.fileToolNames,
  }));
}

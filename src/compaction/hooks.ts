/**
 * `createCompactionHooks`: loop hooks that compact between turns (after a settled tool batch, when the context exceeds window − reserveTokens) and
 * on a context overflow (keeping at most half, one retry per run). A refused or failed compaction returns `undefined` and is reported through
 * `onEvent`; the hooks never throw. {@link compactIfNeeded} is the same check before a prompt. Usage from before the latest compaction is ignored.
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
import { ignored } from "../core/ignored.ts";

/**
 * What the hooks report (ours).
 * @example
 * const log = (event: CompactionHookEvent) => console.log(event.type, event.reason);
 */
export type CompactionHookEvent =
  | { type: "compactionChecked"; reason: CompactionReason; contextTokens: number; contextWindow: number; threshold: number; compacting: boolean }
  | { type: "compactionAppended"; reason: CompactionReason; entryId: string; tokensBefore: number }
  | { type: "compactionSkipped"; reason: CompactionReason; status: "cancelled" | "failed"; detail: string };

/**
 * Options of {@link createCompactionHooks}.
 * @example
 * const options: CompactionHooksOptions = { session, model, settings: { contextWindow: 128_000 } };
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
 * @example
 * const hooks = createCompactionHooks({ session, model, settings: { reserveTokens: 8192 }, onEvent: console.log });
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
    } catch (error) {
      ignored("a compaction onEvent observer threw; it must not break the run", error);
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
 * Compacts the session if its current context is over the threshold (pi's check at the start of every prompt). Returns the outcome, or undefined when
 * no compaction was needed (disabled, window unknown, under the threshold). Never throws.
 * @example
 * await compactIfNeeded({ session, model, settings });
 * await agent.prompt(text);
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

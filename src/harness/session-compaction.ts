/**
 * A harness session's compaction wiring: the hook callbacks of `compact()` and `moveTo()`, the compaction settings (with a traced summarization
 * model) and the loop hooks that compact between turns and on overflow. Stateless: model and thinking level are read at call time.
 */
import type { CompactionHookCallbacks, TreeHookCallbacks } from "../compaction/hook-types.ts";
import { createCompactionHooks } from "../compaction/hooks.ts";
import type { ThinkingLevel } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { SessionHandle } from "../store/session-types.ts";
import type { SessionTelemetry } from "../telemetry/session-telemetry.ts";
import type { HookRunner } from "./hooks.ts";
import type { AgentHarnessOptions } from "./options.ts";

/** What {@link sessionCompaction} reads. */
export interface SessionCompactionInput {
  session: SessionHandle;
  runner: HookRunner;
  telemetry: SessionTelemetry | undefined;
  settings: AgentHarnessOptions["compaction"];
  /** The session's model now (instrumented). */
  model: () => ModelClient;
  instrument: (client: ModelClient) => ModelClient;
  thinkingLevel: () => ThinkingLevel | undefined;
}

/** The compaction wiring of one harness session (see the module contract). */
export function sessionCompaction(input: SessionCompactionInput) {
  const { runner, telemetry } = input;
  const compactionCallbacks: CompactionHookCallbacks = {
    sessionBeforeCompact: (event) => runner.sessionBeforeCompact(event),
    sessionCompact: (event) => runner.observe("sessionCompact", event),
  };
  const treeCallbacks: TreeHookCallbacks = {
    sessionBeforeTree: (event) => runner.sessionBeforeTree(event),
    sessionTree: (event) => runner.observe("sessionTree", event),
  };
  const summarizer = input.settings?.summarizationModel;
  const settings = summarizer && telemetry ? { ...input.settings, summarizationModel: input.instrument(summarizer) } : input.settings;
  const hooks = createCompactionHooks({ session: input.session, model: input.model, settings, hooks: compactionCallbacks, thinkingLevel: input.thinkingLevel });
  // A compaction inside a run is an `arbor.compaction` span holding its model calls (only when it makes one).
  const loopHooks: typeof hooks = telemetry
    ? {
        betweenTurns: (event) => telemetry.operation("compaction", { reason: "threshold" }, () => hooks.betweenTurns(event)),
        onContextOverflow: (event) => telemetry.operation("compaction", { reason: "overflow" }, () => hooks.onContextOverflow(event)),
      }
    : hooks;
  return { compactionCallbacks, treeCallbacks, settings, loopHooks };
}

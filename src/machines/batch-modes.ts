/**
 * What a tool batch's execution mode decides, one row per {@link ToolExecutionMode}: the batch
 * (`run-batch.ts`) and the run actor read these fields and never compare the mode itself, so a
 * new mode is one more row here (and fails to compile until it has one).
 */
import type { ToolExecutionMode } from "../core/tools.ts";

/** The rules of one mode (pi's batch rules for the two built in). */
export interface BatchModePolicy {
  /** The next call is spawned once every spawned call is prepared (`readyCount`) or settled (`settledCount`). */
  spawnAfter: "readyCount" | "settledCount";
  /** A prepared call executes at once; otherwise it waits until the whole batch is prepared, then all execute together. */
  executeOnPrepared: boolean;
  /** A gated call holds back the calls after it, and the batch is done once it is reached. */
  gateHoldsRest: boolean;
  /** A call's tool-result message events are logged when it settles; otherwise with the batch's end, in call order. */
  messagesOnSettle: boolean;
}

export const BATCH_MODES: Readonly<Record<ToolExecutionMode, BatchModePolicy>> = {
  parallel: { spawnAfter: "readyCount", executeOnPrepared: false, gateHoldsRest: false, messagesOnSettle: false },
  sequential: { spawnAfter: "settledCount", executeOnPrepared: true, gateHoldsRest: true, messagesOnSettle: true },
};

/**
 * Compaction and branch summarization (issue 5). See `docs/compaction.md`.
 *
 * Contract: re-exports only; each module states its own contract.
 *
 * @example
 * ```ts
 * import { createCompactionHooks, compact, moveTo, compactionView } from "./compaction/index.ts";
 * const agent = createAgent({ session, model, hooks: createCompactionHooks({ session, model }) });
 * ```
 */
export * from "./tokens.ts";
export * from "./settings.ts";
export * from "./cut-point.ts";
export * from "./entry-messages.ts";
export * from "./file-ops.ts";
export * from "./serialize.ts";
export * from "./prompts.ts";
export * from "./prepare.ts";
export * from "./summarize.ts";
export * from "./hook-types.ts";
export * from "./compaction.machine.ts";
export * from "./compact.ts";
export * from "./branch-summary.ts";
export * from "./overflow.ts";
export * from "./compaction-view.ts";
export * from "./hooks.ts";

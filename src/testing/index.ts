/**
 * `arbor-agent/testing`: helpers for testing code built on Arbor without a real provider.
 *
 * - {@link startOpenAIServer}: a loopback server speaking OpenAI's wire formats (Chat Completions
 *   and Responses), Anthropic Messages and Gemini `streamGenerateContent`, replaying scripted
 *   turns and recorded fixtures;
 * - {@link scriptedModel}: an AI SDK `MockLanguageModelV4` replaying scripted steps;
 * - {@link createAgentTestModel}: model-based tests of a user's agent (paths through the machines, executed on a real harness, checked against Arbor's invariants).
 *
 * @example
 * ```ts
 * import { startOpenAIServer, textResponse } from "arbor-agent/testing";
 * const server = await startOpenAIServer({ responses: [textResponse("hi")] });
 * ```
 */
export * from "./openai-server.ts";
export * from "./openai-wire.ts";
export * from "./provider-wire.ts";
export * from "./scripted-model.ts";
export * from "./agent-test-model.ts";
export { BUILT_IN_INVARIANTS, type AgentInvariant, type InvariantContext } from "./invariants.ts";
export { MODEL_ANSWER_KINDS, type ModelAnswerKind, type PrepareKind, type RunScenario, type ToolScenario } from "./path-graph.ts";
export type { ToolExecutionRecord } from "./path-fixtures.ts";
export { AgentTestPathError, type PathFailure } from "./path-report.ts";
export type { PathReport } from "./path-runner.ts";
export { formatReplayReport, promptLines, replayModel, type ReplayDivergence, type ReplayModel, type ReplayModelOptions, type ReplayReport } from "./replay-model.ts";
export { ReplayError, type RecordedCall, type RecordedSegment, type RecordedSession } from "./replay-record.ts";
export { replayRun, type ReplayRunOptions } from "./replay-run.ts";

/**
 * `arbor-agent/testing`: helpers for testing code built on Arbor without a real provider: {@link startOpenAIServer} (a loopback server speaking
 * OpenAI, Anthropic and Gemini wire formats), {@link scriptedModel} and {@link createAgentTestModel} (model-based tests of a user's agent).
 * @example
 * import { startOpenAIServer, textResponse } from "arbor-agent/testing";
 * const server = await startOpenAIServer({ responses: [textResponse("hi")] });
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
export { type EventLogFactory, runEventLogContract } from "./event-log-contract.ts";
export type { ContractAssertion, ContractTestApi } from "./contract-api.ts";
export { runSessionRepositoryContract, type SessionLogFactory } from "./session-repository-contract.ts";

/**
 * `arbor-agent/testing`: helpers for testing code built on Arbor without a real provider.
 *
 * - {@link startOpenAIServer}: a loopback server speaking OpenAI's wire formats (Chat Completions
 *   and Responses), Anthropic Messages and Gemini `streamGenerateContent`, replaying scripted
 *   turns and recorded fixtures;
 * - {@link scriptedModel}: an AI SDK `MockLanguageModelV3` replaying scripted steps.
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

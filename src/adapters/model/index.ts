/**
 * Model adapters: AI SDK language models as Arbor `ModelClient`s, the default OpenAI
 * provider, message conversion, and error facts. See docs/model-adapter.md.
 */
export * from "./ai-sdk-client.ts";
export * from "./model-errors.ts";
export * from "./openai.ts";
export * from "./providers.ts";
export * from "./responses-item-ids.ts";
export * from "./thinking.ts";
export * from "./to-model-messages.ts";
export * from "./usage.ts";

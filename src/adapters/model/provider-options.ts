/**
 * Provider options as the AI SDK passes them: provider name → that provider's options (ours; the shape of `providerOptions` in `ai` 7). Declared
 * apart from the message conversion so that the model factories' declarations do not depend on the `ai` package's.
 */
export type ProviderOptionsRecord = Record<string, Record<string, any>>;

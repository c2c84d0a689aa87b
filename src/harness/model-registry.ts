/**
 * The harness model registry: names → {@link ModelClient}s with their facts (context window, max output, prices). AI SDK models are wrapped; facts
 * given beside a client override its own; names keep their order, the default being `options.model` or the first. `get` throws
 * `ModelConfigError` for an unknown name; `findByModel` maps a logged model back to a name.
 */
import { createAiSdkModelClient } from "../adapters/model/ai-sdk-client.ts";
import type { LanguageModelV3, LanguageModelV4 } from "@ai-sdk/provider";
import { wrapLanguageModel } from "ai";
import { HarnessConfigError, ModelConfigError } from "../core/errors.ts";
import type { ModelClient, ModelStreamEvent } from "../core/model-stream.ts";
import { priceUsage, type ModelCost } from "../adapters/model/usage.ts";
import { createSecretRedactor } from "../core/secrets.ts";
import { createRedactingModel } from "./redacting-model.ts";
import type { AgentHarnessOptions, ModelEntry, ModelInfo } from "./options.ts";

/** One registry entry. */
export interface RegisteredModel {
  /** The registry name. */
  name: string;
  client: ModelClient;
}

/** Names → models. */
export interface ModelRegistry<Name extends string = string> {
  /** Registry names in the order given. */
  names(): Name[];
  /** The name used when none is chosen. */
  readonly defaultName: string;
  /** Throws ModelConfigError naming the known models for an unknown name. */
  get(name: string): RegisteredModel;
  /** The first entry whose client has this provider and model id. */
  findByModel(model: { provider: string; modelId: string }): RegisteredModel | undefined;
}

function isModelClient(value: unknown): value is ModelClient {
  return typeof value === "object" && value !== null && typeof (value as ModelClient).stream === "function";
}

function withInfo(client: ModelClient, info: ModelInfo): ModelClient {
  if (info.contextWindow === undefined && info.maxTokens === undefined && info.cost === undefined && info.reasoning === undefined) return client;
  return {
    provider: client.provider,
    modelId: client.modelId,
    api: client.api,
    contextWindow: info.contextWindow ?? client.contextWindow,
    maxTokens: info.maxTokens ?? client.maxTokens,
    cost: info.cost ?? client.cost,
    reasoning: info.reasoning ?? client.reasoning,
    ...(client.structuredOutput ? { structuredOutput: true } : {}),
    stream: info.cost === undefined ? (request, options) => client.stream(request, options) : (request, options) => priced(client.stream(request, options), info.cost!),
  };
}

/** The entry's price wins over the client's own: the final message's usage is priced with it. */
async function* priced(events: AsyncIterable<ModelStreamEvent>, cost: ModelCost): AsyncIterable<ModelStreamEvent> {
  for await (const event of events) {
    if ((event.type === "done" || event.type === "error") && event.message.usage) yield { ...event, message: { ...event.message, usage: priceUsage(event.message.usage, cost) } };
    else yield event;
  }
}

/**
 * Builds the registry from `options.models`. With `secrets` (the harness's `secrets`), every client is wrapped by `createRedactingModel`: the secrets
 * are redacted from its requests and its streams.
 * @throws HarnessConfigError naming `models.<name>` for an unsupported model object.
 * @example
 * const registry = createModelRegistry({ main: createOpenAIModel({ modelId: "gpt-4o-mini" }) });
 * registry.defaultName; // "main"
 */
export function createModelRegistry(models: AgentHarnessOptions["models"], defaultName?: string, secrets: readonly string[] = []): ModelRegistry {
  const redactor = createSecretRedactor(secrets);
  const entries = new Map<string, RegisteredModel>();
  for (const [name, value] of Object.entries(models)) {
    const entry: ModelEntry = isModelClient(value) || !("model" in (value as object)) ? { model: value as ModelEntry["model"] } : (value as ModelEntry);
    const { model, ...info } = entry;
    let client: ModelClient;
    if (isModelClient(model)) {
      client = withInfo(model, info);
    } else {
      const version = (model as { specificationVersion?: string }).specificationVersion;
      if (version !== "v4" && version !== "v3") {
        throw new HarnessConfigError(
          `Invalid harness option "models.${name}": AI SDK language model spec "${String(version)}" is not supported; use a provider built for AI SDK 7 (spec v4) or 6 (spec v3), or pass an Arbor ModelClient`,
          { details: { field: `models.${name}` } },
        );
      }
      // A spec-v3 model (a provider package of AI SDK 6) is adapted by the SDK's own wrapper.
      client = createAiSdkModelClient(version === "v4" ? (model as LanguageModelV4) : wrapLanguageModel({ model: model as LanguageModelV3, middleware: [] }), info);
    }
    // Registered secrets never reach the model and never come back from it unredacted.
    entries.set(name, { name, client: createRedactingModel(client, redactor) });
  }
  const names = [...entries.keys()];
  const chosen = defaultName ?? names[0];
  if (!entries.has(chosen)) throw new HarnessConfigError(`Invalid harness option "model": "${chosen}" is not in models (${names.join(", ")})`, { details: { field: "model" } });
  return {
    names: () => [...names],
    defaultName: chosen,
    get(name) {
      const found = entries.get(name);
      if (!found) throw new ModelConfigError(`Unknown model "${name}". Registered models: ${names.join(", ")}.`, { details: { name, known: names } });
      return found;
    },
    findByModel({ provider, modelId }) {
      return [...entries.values()].find((entry) => entry.client.provider === provider && entry.client.modelId === modelId);
    },
  };
}

/**
 * Maps the harness hooks onto the loop's {@link LoopHooks} (`toolCall` → `beforeToolCall`, `toolResult` → `afterToolCall`, `context` →
 * `transformContext`) and applies the stream options to every model request in `beforeModelCall`. A malformed result patch throws, so the loop
 * records an error result. Headers and metadata never reach a record.
 */
import { z } from "zod";
import type { ModelRequest } from "../core/model-stream.ts";
import { createSecretRedactor, type SecretRedactor } from "../core/secrets.ts";
import type { ToolResult } from "../core/tools.ts";
import type { LoopHooks } from "../machines/agent-types.ts";
import { sameJson, type HookRunner } from "./hooks.ts";
import type { RegisteredModel } from "./model-registry.ts";
import type { HarnessStreamOptions } from "./options.ts";

const contentBlock = z.union([
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() }),
]);
const resultPatch = z.object({
  content: z.array(contentBlock).optional(),
  details: z.unknown().optional(),
  isError: z.boolean().optional(),
  terminate: z.boolean().optional(),
});

/** `content` with every secret (in each of its forms, `createSecretRedactor`) replaced by `[redacted]` in its text blocks; the same array when nothing changed. */
export function redactContentSecrets(content: ToolResult["content"], redactor: SecretRedactor): ToolResult["content"] {
  if (redactor.size === 0) return content;
  let changed = false;
  const next = content.map((block) => {
    if (block.type !== "text") return block;
    const text = redactor.redact(block.text);
    if (text === block.text) return block;
    changed = true;
    return { ...block, text };
  });
  return changed ? next : content;
}

/** Why a toolResult patch is malformed (the first failing field), or undefined. */
export function invalidResultPatch(patch: Record<string, unknown>): string | undefined {
  const result = resultPatch.safeParse(patch);
  if (result.success) return undefined;
  const issue = result.error.issues[0];
  return `${issue.path.join(".") || "(patch)"}: ${issue.message}`;
}

/** What {@link createLoopHooks} reads at call time. */
export interface LoopHookBindings {
  runner: HookRunner;
  /** The session's system prompt now; a run's own (the request's, from `beforeAgentStart`) wins over it. */
  systemPrompt: () => string;
  /** The current model. */
  model: () => RegisteredModel;
  streamOptions?: HarnessStreamOptions;
  /** Values replaced by `[redacted]` in tool output before the model or the log sees it (at least 6 characters). */
  secrets?: readonly string[];
}

/** Provider options implied by the stream options for a provider (OpenAI only, today). */
export function streamProviderOptions(provider: string, options: HarnessStreamOptions | undefined): ModelRequest["providerOptions"] {
  if (!options || provider !== "openai") return undefined;
  const openai: Record<string, unknown> = {};
  if (options.metadata) openai.metadata = { ...options.metadata };
  if (options.cacheRetention === "long") openai.promptCacheRetention = "24h";
  return Object.keys(openai).length ? { openai } : undefined;
}

function mergeProviderOptions(base: ModelRequest["providerOptions"], extra: ModelRequest["providerOptions"]): ModelRequest["providerOptions"] {
  if (!extra) return base;
  const merged: NonNullable<ModelRequest["providerOptions"]> = { ...base };
  for (const [provider, values] of Object.entries(extra)) merged[provider] = { ...values, ...merged[provider] };
  return merged;
}

/** Builds the loop hooks (see the module contract). */
export function createLoopHooks(bindings: LoopHookBindings): LoopHooks {
  const { runner, streamOptions } = bindings;
  const secrets = createSecretRedactor(bindings.secrets ?? []);
  return {
    async beforeToolCall({ toolCallId, toolName, args }) {
      if (!runner.has("toolCall")) return undefined;
      const before = structuredClone(args);
      const decision = await runner.toolCall({ toolCallId, toolName, input: args });
      if (decision.block) return { block: true, reason: decision.reason };
      return sameJson(before, decision.input) ? undefined : { args: decision.input };
    },
    async afterToolCall({ toolCallId, toolName, args, result, isError }) {
      if (!runner.has("toolResult") && secrets.size === 0) return undefined;
      const original = { content: result.content, details: result.details, isError, terminate: result.terminate === true };
      const patched = runner.has("toolResult") ? await runner.toolResult({ toolCallId, toolName, input: args, ...original }) : original;
      const patch: Record<string, unknown> = {};
      for (const key of ["content", "details", "isError", "terminate"] as const) {
        if (patched[key] !== original[key]) patch[key] = patched[key];
      }
      // A malformed patch must not reach the log (it would be refused there): it fails the
      // call instead, and the loop turns that into an error result.
      const problem = invalidResultPatch(patch);
      if (problem) throw new Error(`A toolResult hook returned an invalid patch: ${problem}.`);
      // Known secrets (the harness's `secrets`) never reach the model through tool output, e.g. a bash command that prints the parent's environment.
      const content = (patch.content ?? original.content) as ToolResult["content"];
      const redacted = redactContentSecrets(content, secrets);
      if (redacted !== content) patch.content = redacted;
      return Object.keys(patch).length ? patch : undefined;
    },
    transformContext: (messages) => runner.context(messages),
    async beforeModelCall(request) {
      const { name, client } = bindings.model();
      let next: ModelRequest = { ...request, systemPrompt: request.systemPrompt ?? bindings.systemPrompt() };
      if (streamOptions?.headers) next.headers = { ...streamOptions.headers, ...next.headers };
      if (streamOptions?.timeoutMs !== undefined && next.timeoutMs === undefined) next.timeoutMs = streamOptions.timeoutMs;
      next.providerOptions = mergeProviderOptions(next.providerOptions, streamProviderOptions(client.provider, streamOptions));
      if (next.providerOptions === undefined) delete next.providerOptions;
      if (runner.has("beforeProviderRequest")) {
        const options = await runner.beforeProviderRequest({
          options: {
            model: name,
            thinkingLevel: next.thinkingLevel,
            maxTokens: next.maxTokens,
            temperature: next.temperature,
            headers: next.headers,
            timeoutMs: next.timeoutMs,
            providerOptions: next.providerOptions,
          },
          systemPrompt: next.systemPrompt,
          toolNames: next.tools.map((tool) => tool.name),
        });
        const { model: _model, ...fields } = options;
        next = { ...next, ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) };
      }
      const wantsPayload = runner.has("beforeProviderPayload");
      const wantsResponse = runner.has("afterProviderResponse");
      if (wantsPayload || wantsResponse) {
        next.hooks = {
          ...next.hooks,
          ...(wantsPayload ? { onPayload: (payload: unknown) => runner.beforeProviderPayload(payload) } : {}),
          ...(wantsResponse ? { onResponse: (response: { status: number; headers: Record<string, string> }) => runner.observe("afterProviderResponse", response) } : {}),
        };
      }
      return next;
    },
  };
}

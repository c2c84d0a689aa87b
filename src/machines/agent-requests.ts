/**
 * What a run asks of its tools and model, read from the agent machine's state at call time: the tool runtime (only active tools; approval policy,
 * the agent's and the current run's;
 * commit before effect; the budget) and the model request (context through `transformContext`/`convertToLlm`, then `beforeModelCall`).
 */
import { convertToLlm } from "../core/convert-to-llm.ts";
import type { AgentMessage } from "../core/messages.ts";
import type { ModelRequest } from "../core/model-stream.ts";
import type { AgentOptions } from "./agent-types.ts";
import type { AgentSettings } from "./agent-settings.ts";
import type { ToolRuntime } from "./loop-tools.ts";
import { policyGates, type RunPolicy } from "../core/run-policy.ts";

const isActive = (settings: AgentSettings, name: string) => settings.activeToolNames === null || settings.activeToolNames.includes(name);

/** The tool runtime of the agent's runs (see the module contract). */
export function agentToolRuntime(
  options: AgentOptions,
  state: { settings: () => AgentSettings; commit: () => Promise<void>; runPolicy: () => RunPolicy | undefined; budget?: ToolRuntime["budget"] },
): ToolRuntime {
  const own: RunPolicy = options.requireApproval ? { requireApproval: options.requireApproval } : {};
  return {
    ...(state.budget ? { budget: state.budget } : {}),
    getTool: (name) => (isActive(state.settings(), name) ? state.settings().tools.get(name) : undefined),
    hooks: options.hooks ?? {},
    toolContext: (call) =>
      typeof options.toolContext === "function" ? (options.toolContext as (c: typeof call) => unknown)(call) : options.toolContext,
    commit: state.commit,
    ...(options.secrets?.length ? { secrets: options.secrets } : {}),
    // The agent's own policy, and the current run's (a continued run's holds what its first process recorded).
    requiresApproval: (name) => policyGates(own, name) || policyGates(state.runPolicy(), name),
  };
}

/** The model request builder of the agent's runs (see the module contract). */
export function agentRequestBuilder(options: AgentOptions, state: { settings: () => AgentSettings; runSystemPrompt: () => string | undefined }) {
  const hooks = options.hooks ?? {};
  return async (messages: AgentMessage[], signal: AbortSignal): Promise<ModelRequest> => {
    const context = hooks.transformContext ? await hooks.transformContext(messages, signal) : messages;
    const llm = hooks.convertToLlm ? await hooks.convertToLlm(context) : convertToLlm(context);
    const settings = state.settings();
    const request: ModelRequest = {
      ...options.requestDefaults,
      messages: llm,
      tools: [...settings.tools.values()].filter((tool) => isActive(settings, tool.name)).map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters })),
      thinkingLevel: settings.thinkingLevel,
    };
    // This run's own system prompt (`PreparedPrompt.systemPrompt`, in the run input) replaces the agent's.
    const systemPrompt = state.runSystemPrompt() ?? options.systemPrompt;
    if (systemPrompt !== undefined) request.systemPrompt = systemPrompt;
    return hooks.beforeModelCall ? hooks.beforeModelCall(request) : request;
  };
}

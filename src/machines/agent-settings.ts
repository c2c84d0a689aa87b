/**
 * The agent's settings as session-actor state (ours): the model, the tools, the
 * active tool names and the thinking level live in the agent machine's context and change only
 * through its `SETTINGS.SET` event, so a change during a run goes through the slot like every
 * other operation (it takes effect at the next model call; `agent.ts` logs it when the slot
 * is idle).
 *
 * Contract:
 * - the state's enumerable fields are plain data (the model's provider, id and api, its name
 *   where the caller registered it (the harness's registry name), tool names, active names,
 *   thinking level): what a snapshot, the inspector or `JSON.stringify`
 *   shows; the model client and the tool implementations are non-enumerable fields (`client`,
 *   `tools`), so no client configuration ever leaves the process through a snapshot;
 * - `withSettings(state, change)` returns a new state (the old one is unchanged); a new `model`
 *   without a `modelName` clears the name (it named the old model).
 *
 * @example
 * ```ts
 * const state = agentSettings({ model, tools: [echo], activeToolNames: null, thinkingLevel: "off" });
 * state.client.stream(request, { signal }); state.toolNames; // ["echo"]
 * ```
 */
import type { ThinkingLevel } from "../core/messages.ts";
import type { ModelClient } from "../core/model-stream.ts";
import type { AgentTool } from "../core/tools.ts";

/** What the settings are made of. */
export interface AgentSettingsInput {
  model: ModelClient;
  /** The model's name where the caller registered it (the harness: its registry name); plain data. */
  modelName?: string;
  tools: readonly AgentTool<any, any, any>[] | ReadonlyMap<string, AgentTool<any, any, any>>;
  /** `null`: every tool is active. */
  activeToolNames: string[] | null;
  thinkingLevel: ThinkingLevel;
}

/** The settings as machine state (see the module contract). */
export interface AgentSettings {
  readonly model: { provider: string; modelId: string; api: string };
  /** The model's registered name, when the caller gave one. */
  readonly modelName?: string;
  readonly toolNames: string[];
  readonly activeToolNames: string[] | null;
  readonly thinkingLevel: ThinkingLevel;
  /** The model client (non-enumerable). */
  readonly client: ModelClient;
  /** The tools by name (non-enumerable). */
  readonly tools: ReadonlyMap<string, AgentTool<any, any, any>>;
}

/**
 * Builds the settings state (see the module contract).
 *
 * @example
 * ```ts
 * const state = agentSettings({ model, tools: [], activeToolNames: null, thinkingLevel: "off" });
 * ```
 */
export function agentSettings(input: AgentSettingsInput): AgentSettings {
  const tools = input.tools instanceof Map ? new Map(input.tools) : new Map((input.tools as readonly AgentTool<any, any, any>[]).map((tool) => [tool.name, tool]));
  const state = {
    model: { provider: input.model.provider, modelId: input.model.modelId, api: input.model.api },
    ...(input.modelName !== undefined ? { modelName: input.modelName } : {}),
    toolNames: [...tools.keys()],
    activeToolNames: input.activeToolNames,
    thinkingLevel: input.thinkingLevel,
  };
  Object.defineProperty(state, "client", { value: input.model, enumerable: false });
  Object.defineProperty(state, "tools", { value: tools, enumerable: false });
  return state as AgentSettings;
}

/**
 * A new state with `change` applied.
 *
 * @example
 * ```ts
 * const next = withSettings(state, { thinkingLevel: "high" });
 * ```
 */
export function withSettings(state: AgentSettings, change: Partial<AgentSettingsInput>): AgentSettings {
  return agentSettings({
    model: change.model ?? state.client,
    modelName: change.model !== undefined ? change.modelName : (change.modelName ?? state.modelName),
    tools: change.tools ?? state.tools,
    activeToolNames: change.activeToolNames !== undefined ? change.activeToolNames : state.activeToolNames,
    thinkingLevel: change.thinkingLevel ?? state.thinkingLevel,
  });
}

/**
 * The agent's settings (model, tools, active tool names, thinking level) as session-actor state, changed only through `SETTINGS.SET` and effective
 * at the next model call. Enumerable fields are plain data; the model client and tool implementations are non-enumerable, so no client
 * configuration leaves the process through a snapshot. `withSettings` returns a new state.
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

/** Builds the settings state (see the module contract). */
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

/** A new state with `change` applied. */
export function withSettings(state: AgentSettings, change: Partial<AgentSettingsInput>): AgentSettings {
  return agentSettings({
    model: change.model ?? state.client,
    modelName: change.model !== undefined ? change.modelName : (change.modelName ?? state.modelName),
    tools: change.tools ?? state.tools,
    activeToolNames: change.activeToolNames !== undefined ? change.activeToolNames : state.activeToolNames,
    thinkingLevel: change.thinkingLevel ?? state.thinkingLevel,
  });
}

/**
 * Builds the harness the CLI's model commands run: the model from flags, pi's coding tools bound to `--cwd` (bash confined as `--sandbox` says),
 * skills, prompt templates and context files from Arbor's and pi's folders (`cli-resources.ts`), and the CLI's event log. The API key goes to the
 * model client only and is redacted from tool output.
 */
import { hasWorkspaceCheckpoints } from "./workspace-actions.ts";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createExecutionEnv } from "../adapters/execution-env.ts";
import { createModel } from "../adapters/model/providers.ts";
import { createCodingTools } from "../adapters/tools/index.ts";
import type { ModelClient } from "../core/model-stream.ts";
import { loadCliResources, type CliResources } from "./cli-resources.ts";
import { createHarness, type AgentHarness } from "../harness/create-harness.ts";
import { CliError } from "./cli-error.ts";
import { createFileMcpAuthStore } from "../adapters/mcp/oauth-store.ts";
import { askElicitationOnTerminal, mcpAuthDir, mcpDiagnosticLine, printElicitation } from "./mcp-output.ts";
import { resolveMcpServers } from "./mcp-config.ts";
import { toolEnvOptions, type ToolFlags } from "./tool-flags.ts";
import { settingsSecrets, type ResolvedModelSettings } from "./config.ts";
import type { CliStore } from "./store-context.ts";
import type { Durability } from "../machines/agent-types.ts";
import { loadCliTelemetry } from "./otel-exporter.ts";
import type { HarnessBudget } from "../harness/budget-options.ts";

/** What the model commands need. */
export interface CliHarness {
  harness: AgentHarness;
  model: ModelClient;
  cwd: string;
  /** The sandbox of bash commands, for the start-up line (`ExecutionEnv.sandbox.describe()`). */
  sandbox: string;
  /** Paths of the context files in the system prompt (AGENTS.md / CLAUDE.md), global first. */
  contextFiles: string[];
  /** The `/commands` the harness expands: `skill:<name>` for each skill, and each prompt template's name. */
  slashCommands: string[];
  /** Skills, templates and context files loaded, with their load problems. */
  resources: CliResources;
}

/** Builds the model client for the resolved settings. */
export function createCliModel(settings: ResolvedModelSettings): ModelClient {
  return createModel(settings.spec.provider, {
    modelId: settings.spec.modelId,
    baseURL: settings.baseURL,
    apiKey: settings.apiKey,
    api: settings.api,
    contextWindow: settings.contextWindow,
    ...(settings.idleTimeoutMs !== undefined ? { idleTimeoutMs: settings.idleTimeoutMs } : {}),
  });
}

/**
 * The folder a command's tools work in: `--cwd`, else the folder an existing session recorded, else the current directory. A recorded folder that
 * is gone is a `CliError` (exit 2), so a resumed agent never writes elsewhere.
 */
export function resolveSessionCwd(flag: string | undefined, recorded: string | undefined, sessionId?: string): string {
  if (flag !== undefined) return flag;
  if (recorded === undefined || recorded === "") return process.cwd();
  if (!existsSync(recorded)) {
    const which = sessionId ? `Session ${sessionId}` : "The session";
    throw new CliError(`${which} was started in ${recorded}, which no longer exists; pass --cwd DIR to resume it in another folder.`);
  }
  return recorded;
}

/**
 * A `cost=` budget (`--budget`, `--session-budget`, `--tenant-budget`) of a model whose prices are unknown can never be checked: refused before
 * anything is written, naming `--price`.
 */
function refuseUnpricedCostBudget(budget: HarnessBudget | undefined, settings: ResolvedModelSettings, known: unknown): void {
  if (!budget || settings.cost || known) return;
  const scopes = (["run", "session", "tenant"] as const).filter((scope) => {
    const limits = budget[scope];
    return typeof limits === "object" && limits !== null && limits.maxCostUsd !== undefined;
  });
  if (scopes.length === 0) return;
  const flags = { run: "--budget", session: "--session-budget", tenant: "--tenant-budget" };
  throw new CliError(
    `${scopes.map((scope) => flags[scope]).join(" and ")} limit${scopes.length === 1 ? "s" : ""} cost, but the prices of ${settings.spec.provider}:${settings.spec.modelId} are not known: give them with --price input=<$ per million input tokens>,output=<$ per million output tokens> (or ARBOR_MODEL_PRICE), or drop cost= from the budget.`,
  );
}

/** Creates the harness over the CLI's store for an existing or new session. */
export async function createCliHarness(input: {
  store: CliStore;
  sessionId?: string;
  cwd: string;
  settings: ResolvedModelSettings;
  /** XState inspection observer (from `--inspect`). */
  inspect?: unknown;
  /** `--sandbox`, `--allow-network`, `--env`, `--allow-hard-links`. */
  tools?: ToolFlags;
  /** False for `--no-context-files`: no AGENTS.md / CLAUDE.md in the system prompt. */
  contextFiles?: boolean;
  /** Compaction settings, e.g. `--keep-recent` (tokens). */
  compaction?: { keepRecentTokens?: number };
  /** `--approve` tool names (or `all`): their calls need a decision before they run. */
  requireApproval?: readonly string[] | "all";
  /** Resources the command loaded already (`loadCliResources(cwd)`); else they are loaded here. */
  resources?: CliResources;
  /** `arbor resume`: the session's unfinished run is continued, not closed (`docs/durability.md`). */
  durability?: Durability;
  /** `--budget` (and serve's session and tenant budgets): `docs/budgets.md`. */
  budget?: HarnessBudget;
  /** More models in the harness's registry, by `provider:model` name (the chat's `/model` switches to one). */
  extraModels?: readonly ResolvedModelSettings[];
  /** On a terminal: MCP servers' requests for input are also asked here (`askElicitationOnTerminal`). */
  askElicitations?: boolean;
}): Promise<CliHarness> {
  const cwd = resolve(input.cwd);
  if (!existsSync(cwd)) throw new CliError(`--cwd "${input.cwd}" does not exist.`);
  const model = createCliModel(input.settings);
  refuseUnpricedCostBudget(input.budget, input.settings, model.cost);
  const secrets = [input.settings, ...(input.extraModels ?? [])].flatMap((settings) => settingsSecrets(settings));
  const extraModels = Object.fromEntries(
    (input.extraModels ?? []).map((settings) => [`${settings.spec.provider}:${settings.spec.modelId}`, { model: createCliModel(settings), ...(settings.contextWindow ? { contextWindow: settings.contextWindow } : {}) }]),
  );
  // The same secrets are redacted from bash spill files.
  const env = createExecutionEnv({ ...toolEnvOptions(cwd, input.tools ?? {}), secrets });
  const resources = input.resources ?? loadCliResources(cwd, { contextFiles: input.contextFiles !== false });
  const { contextFiles } = resources;
  const name = `${input.settings.spec.provider}:${input.settings.spec.modelId}`;
  const otel = await loadCliTelemetry(process.env);
  // A session that recorded its files keeps recording them, with or without the flag.
  const recordFiles = input.tools?.checkpoints === true || (input.sessionId !== undefined && (await hasWorkspaceCheckpoints(input.store.log, input.sessionId)));
  const mcpServers = resolveMcpServers(input.tools?.mcp ?? [], cwd);
  const harness = await createHarness({
    ...(otel ? { telemetry: otel.telemetry } : {}),
    repository: input.store.repo,
    sessionId: input.sessionId,
    cwd,
    models: { ...extraModels, [name]: { model, ...(input.settings.contextWindow ? { contextWindow: input.settings.contextWindow } : {}), ...(input.settings.cost ? { cost: input.settings.cost } : {}) } },
    model: name,
    tools: createCodingTools(env),
    resources: { skills: resources.skills, promptTemplates: resources.promptTemplates },
    ...(contextFiles.length > 0 ? { contextFiles } : {}),
    ...(input.inspect !== undefined ? { inspect: input.inspect } : {}),
    ...(input.compaction ? { compaction: input.compaction } : {}),
    ...(input.requireApproval !== undefined ? { requireApproval: input.requireApproval } : {}),
    ...(recordFiles ? { workspace: { root: cwd } } : {}),
    ...(input.durability !== undefined ? { durability: input.durability } : {}),
    ...(input.budget ? { budget: input.budget } : {}),
    ...(mcpServers.length > 0 ? { mcpServers, mcpAuth: { store: createFileMcpAuthStore(mcpAuthDir()), tenant: input.store.tenant }, elicitation: { onRequested: printElicitation, ...(input.askElicitations ? { ask: askElicitationOnTerminal } : {}) } } : {}),
    // The key and a URL password (and their encodings) never reach the model, its requests or the
    // log: tool output, streamed deltas and requests are redacted (the CLI's log redacts them too).
    secrets,
  }).catch(async (error: unknown) => {
    await otel?.shutdown();
    throw error;
  });
  for (const problem of harness.mcp?.diagnostics ?? []) process.stderr.write(`${mcpDiagnosticLine(problem)}\n`);
  if (otel) {
    // The spans of the last run leave before the process does.
    const close = harness.close.bind(harness);
    harness.close = async () => {
      await close();
      await otel.shutdown();
    };
  }
  return { harness, model, cwd, sandbox: env.sandbox.describe(), slashCommands: resources.slashCommands, resources, contextFiles: contextFiles.map((file) => file.path) };
}

/**
 * The session the chat TUI talks to, and how it switches: the harness over the CLI's store for one session, opened again for `/resume`, `/new`,
 * `/fork` and `/model` (the harness's model registry is fixed when it is built, so a new model needs a new harness over the same session; the switch
 * itself is `setModel`, logged as a `model_change` entry).
 */
import { createCliHarness, resolveSessionCwd, type CliHarness } from "../agent-setup.ts";
import { CliError } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets, type ResolvedModelSettings } from "../config.ts";
import { recordEndpoint, recordedEndpoint, type CliStore } from "../store-context.ts";
import type { ChatFlags } from "../commands/chat.ts";
import type { ThinkingLevel } from "../../core/messages.ts";

/** What opening a chat session needs, fixed for the process. */
export interface ChatOpener {
  store: CliStore;
  flags: ChatFlags;
  inspect?: unknown;
  requireApproval?: readonly string[] | "all";
  /** `--thinking` (or a `:level` model suffix): set on the first session opened. */
  thinking?: ThinkingLevel;
}

/** An open chat session. */
export interface OpenChat extends CliHarness {
  settings: ResolvedModelSettings;
  /** `provider:model`. */
  modelName: string;
}

/**
 * The settings a session would use: the flags over what the session recorded. `model` names another model (`/model`); `"recorded"` keeps the
 * session's own (`/resume`: `--model` chose the first session's model, not every session's).
 */
export async function settingsFor(opener: ChatOpener, sessionId: string | undefined, model?: string): Promise<ResolvedModelSettings> {
  const existing = sessionId ? await opener.store.repo.open(sessionId) : undefined;
  const recorded = existing ? recordedEndpoint(existing) : {};
  const flags = model === "recorded" ? { ...opener.flags, model: recorded.model ?? opener.flags.model } : model ? { ...opener.flags, model } : opener.flags;
  const settings = resolveModelSettings(flags, process.env, recorded);
  if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
  opener.store.addSecrets(settingsSecrets(settings));
  return settings;
}

/** Opens `sessionId` (a new session when undefined) with `settings`; `extra` adds models to switch to. */
export async function openChat(opener: ChatOpener, sessionId: string | undefined, settings: ResolvedModelSettings, extra: ResolvedModelSettings[] = []): Promise<OpenChat> {
  const existing = sessionId ? await opener.store.repo.open(sessionId) : undefined;
  const cwd = resolveSessionCwd(opener.flags.cwd, existing?.view.info.cwd, sessionId);
  const cli = await createCliHarness({
    store: opener.store,
    sessionId,
    cwd,
    settings,
    inspect: opener.inspect,
    tools: opener.flags,
    contextFiles: opener.flags.contextFiles !== false,
    extraModels: extra,
    ...(opener.requireApproval ? { requireApproval: opener.requireApproval } : {}),
  });
  const thinking = opener.thinking ?? settings.spec.thinking;
  // The flag applies to the session the chat starts with; later sessions keep their own level.
  opener.thinking = undefined;
  if (thinking !== undefined && cli.harness.getState().thinkingLevel !== thinking) await cli.harness.setThinkingLevel(thinking);
  await recordEndpoint(cli.harness.session as never, settings);
  return { ...cli, settings, modelName: `${settings.spec.provider}:${settings.spec.modelId}` };
}

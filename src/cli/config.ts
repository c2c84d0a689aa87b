/**
 * Resolves the CLI's storage and model settings from flags and the environment.
 *
 * Contract (ours):
 * - storage: `--db PATH`, else `ARBOR_DB`, else `.arbor/arbor.db` in the current
 *   directory; the parent directory is created on first use;
 * - model: `--model provider:model`, else `ARBOR_MODEL`; only the `openai`
 *   provider (any OpenAI-compatible server through `--base-url`) is built in;
 * - API: `--api chat|responses`; chat by default when a base URL is given
 *   (most OpenAI-compatible servers only speak Chat Completions), else responses;
 * - key: `OPENAI_API_KEY`, or the variable named by `--api-key-env NAME`.
 * Throws `CliError` naming the flag or variable to set.
 *
 * @example
 * ```ts
 * const spec = parseModelSpec("openai:gpt-4o-mini"); // { provider: "openai", modelId: "gpt-4o-mini" }
 * ```
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { CliError } from "./cli-error.ts";

/** `provider:model`. */
export interface ModelSpec {
  provider: string;
  modelId: string;
}

/** Flags shared by commands that call a model. */
export interface ModelFlags {
  model?: string;
  baseUrl?: string;
  api?: string;
  contextWindow?: string;
  apiKeyEnv?: string;
  /** Seconds, `0` for off. */
  idleTimeout?: string;
}

/** The database path for these flags; creates its directory unless `create: false`. */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), options: { create?: boolean } = {}): string {
  const path = resolve(cwd, flag ?? env.ARBOR_DB ?? ".arbor/arbor.db");
  if (options.create !== false) mkdirSync(dirname(path), { recursive: true });
  return path;
}

/** Parses `provider:model` (a bare `model` means `openai:model`). */
export function parseModelSpec(text: string | undefined): ModelSpec {
  if (!text || text.trim() === "") {
    throw new CliError("No model given: pass --model provider:model (e.g. openai:gpt-4o-mini) or set ARBOR_MODEL.");
  }
  const index = text.indexOf(":");
  if (index === -1) return { provider: "openai", modelId: text };
  const provider = text.slice(0, index);
  const modelId = text.slice(index + 1);
  if (!provider || !modelId) throw new CliError(`Bad --model "${text}": expected provider:model, e.g. openai:gpt-4o-mini.`);
  return { provider, modelId };
}

/** Settings for building the model client. */
export interface ResolvedModelSettings {
  spec: ModelSpec;
  baseURL?: string;
  api: "chat" | "responses";
  apiKey?: string;
  apiKeyEnv: string;
  contextWindow?: number;
  /** From `--idle-timeout` (seconds), in ms; undefined keeps the adapter's default (120 s). */
  idleTimeoutMs?: number;
}

/** Endpoint settings a session recorded on an earlier run (never a key). */
export interface RecordedEndpoint {
  model?: string;
  baseURL?: string;
  api?: string;
  contextWindow?: number;
}

/**
 * Resolves model flags; the key may be missing (the caller reports it after saving
 * the prompt). Order: flags, then the environment, then what the session recorded.
 */
export function resolveModelSettings(flags: ModelFlags, env: NodeJS.ProcessEnv = process.env, recorded: RecordedEndpoint = {}): ResolvedModelSettings {
  const spec = parseModelSpec(flags.model ?? env.ARBOR_MODEL ?? recorded.model);
  if (spec.provider !== "openai") {
    throw new CliError(
      `Unknown provider "${spec.provider}": the CLI speaks the OpenAI wire protocol; use --model openai:${spec.modelId} with --base-url for any OpenAI-compatible server.`,
    );
  }
  const baseURL = flags.baseUrl ?? env.OPENAI_BASE_URL ?? recorded.baseURL;
  const api = flags.api ?? (flags.baseUrl === undefined && env.OPENAI_BASE_URL === undefined ? recorded.api : undefined) ?? (baseURL ? "chat" : "responses");
  if (api !== "chat" && api !== "responses") throw new CliError(`Bad --api "${api}": use chat or responses.`);
  let contextWindow: number | undefined = recorded.contextWindow;
  if (flags.contextWindow !== undefined) {
    contextWindow = Number(flags.contextWindow);
    if (!Number.isInteger(contextWindow) || contextWindow <= 0) {
      throw new CliError(`Bad --context-window "${flags.contextWindow}": expected a positive whole number of tokens.`);
    }
  }
  let idleTimeoutMs: number | undefined;
  if (flags.idleTimeout !== undefined) {
    const seconds = Number(flags.idleTimeout);
    if (flags.idleTimeout.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
      throw new CliError(`Bad --idle-timeout "${flags.idleTimeout}": expected a number of seconds (0 turns the idle timeout off).`);
    }
    idleTimeoutMs = Math.round(seconds * 1000);
  }
  const apiKeyEnv = flags.apiKeyEnv ?? "OPENAI_API_KEY";
  const apiKey = env[apiKeyEnv];
  return {
    spec,
    baseURL,
    api,
    apiKey: apiKey && apiKey.length > 0 ? apiKey : undefined,
    apiKeyEnv,
    contextWindow,
    ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
  };
}

/** The password of a base URL's credentials, if any. */
function urlPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

/** The values of these settings that must never reach the log or the model: the key and a URL password. */
export function settingsSecrets(settings: ResolvedModelSettings): string[] {
  return [settings.apiKey, urlPassword(settings.baseURL)].filter((secret): secret is string => typeof secret === "string");
}

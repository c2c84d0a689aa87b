/**
 * Resolves the CLI's storage (`--db`, `ARBOR_DB`, `.arbor/arbor.db`) and model settings (`--model provider:model[:thinking]`, base URL, API, key
 * variable) from flags, the environment and what the session recorded. `settingsSecrets` lists the key and every provider key that is set, for
 * redaction. Throws `CliError` naming the flag or variable to set.
 */
import { mkdirSync, statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import { defaultOpenAIWire } from "../adapters/model/openai.ts";
import { PROVIDER_BASE_URL_VARIABLES, PROVIDER_KEY_VARIABLES, type ModelProvider } from "../adapters/model/providers.ts";
import type { ThinkingLevel } from "../core/messages.ts";
import type { ModelCost } from "../adapters/model/usage.ts";
import { CliError } from "./cli-error.ts";

/** `provider:model` (or pi's `provider/model`), with pi's optional `:thinking` suffix. */
export interface ModelSpec {
  provider: string;
  modelId: string;
  /** From a `:off|minimal|low|medium|high|xhigh` suffix. */
  thinking?: ThinkingLevel;
}

/** pi's thinking levels (`--thinking`, the `:level` suffix of `--model`). */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/** Checks a `--thinking` value; throws `CliError` naming the levels. */
export function parseThinkingLevel(text: string): ThinkingLevel {
  const level = text.trim().toLowerCase();
  if (!(THINKING_LEVELS as readonly string[]).includes(level)) throw new CliError(`Bad --thinking "${text}": use one of ${THINKING_LEVELS.join(", ")}.`);
  return level as ThinkingLevel;
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
  /** The model's prices in $ per million tokens, `input=…,output=…[,cache-read=…,cache-write=…]` (default: $ARBOR_MODEL_PRICE). */
  price?: string;
}

/** True for `postgres://...` and `postgresql://...` connection strings. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The database path (or PostgreSQL connection string) for these flags; creates its directory unless `create: false`. */
export function resolveDbPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), options: { create?: boolean } = {}): string {
  if (flag !== undefined && flag.trim() === "") throw new CliError("--db is empty: pass a log file path (e.g. .arbor/arbor.db) or a postgres:// URL.");
  // An empty ARBOR_DB counts as unset (the shell's `ARBOR_DB= arbor ...`).
  const given = flag ?? (env.ARBOR_DB === "" ? undefined : env.ARBOR_DB);
  const source = flag !== undefined ? "--db" : given !== undefined ? "ARBOR_DB" : "the default log";
  // A PostgreSQL connection string names a shared log (schema `arbor`), not a file.
  if (given !== undefined && isPostgresUrl(given)) return given;
  const path = resolve(cwd, given ?? ".arbor/arbor.db");
  const stat = statOrUndefined(path);
  if (stat?.isDirectory()) throw new CliError(`${source} ${path} is a folder, not a log file; name a file inside it, e.g. --db ${resolve(path, "arbor.db")}.`);
  // A file where a folder of the path should be: say which (mkdir's EEXIST/ENOTDIR name neither).
  for (let folder = dirname(path); folder !== dirname(folder); folder = dirname(folder)) {
    const folderStat = statOrUndefined(folder);
    if (folderStat === undefined) continue;
    if (!folderStat.isDirectory()) throw new CliError(`${source} ${path} cannot be used: ${folder} is a file, not a folder.`);
    break;
  }
  if (options.create !== false) {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new CliError(`${source} ${path} cannot be used: could not create its folder ${dirname(path)} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
    }
  }
  return path;
}

/** `statSync`, or undefined when nothing is there (ENOENT) or a file is in the way (ENOTDIR). */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The suggestion for a bare model id: the provider whose models look like it (gpt-…, claude-…, gemini-…), else the generic form. */
function providerHint(modelId: string): string {
  const name = modelId.toLowerCase();
  if (/^(gpt-|chatgpt-|o\d)/.test(name)) return `e.g. --model openai:${modelId} (also for OpenAI-compatible servers with --base-url).`;
  if (name.startsWith("claude")) return `e.g. --model anthropic:${modelId}.`;
  if (name.startsWith("gemini")) return `e.g. --model google:${modelId}.`;
  return `as --model <provider>:<model>, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or google:gemini-2.5-flash (openai:<model> with --base-url for an OpenAI-compatible server).`;
}

/** Parses `provider:model`; a bare model id is refused with a `CliError` that names the providers. */
export function parseModelSpec(text: string | undefined): ModelSpec {
  if (!text || text.trim() === "") {
    throw new CliError("No model given: pass --model provider:model (e.g. openai:gpt-4o-mini) or set ARBOR_MODEL.");
  }
  // pi's `provider/model` when the slash comes before any colon; else Arbor's `provider:model`.
  const slash = text.indexOf("/");
  const colon = text.indexOf(":");
  const index = slash !== -1 && (colon === -1 || slash < colon) ? slash : colon;
  if (index === -1) throw new CliError(`Bad --model "${text}": name the provider too, ${providerHint(text)}`);
  const provider = text.slice(0, index);
  let modelId = text.slice(index + 1);
  // pi's `:thinking` suffix, only when it is a level (model ids such as llama3:8b keep their colon).
  const suffix = /^(.+):(off|minimal|low|medium|high|xhigh)$/.exec(modelId);
  const thinking = suffix ? (suffix[2] as ThinkingLevel) : undefined;
  if (suffix) modelId = suffix[1];
  if (!provider || !modelId) throw new CliError(`Bad --model "${text}": expected provider:model or provider/model, e.g. openai:gpt-4o-mini.`);
  return { provider, modelId, ...(thinking ? { thinking } : {}) };
}

/** Settings for building the model client. */
export interface ResolvedModelSettings {
  spec: ModelSpec & { provider: ModelProvider };
  baseURL?: string;
  /** The OpenAI wire API; undefined for the other providers. */
  api?: "chat" | "responses";
  apiKey?: string;
  apiKeyEnv: string;
  contextWindow?: number;
  /** From `--idle-timeout` (seconds), in ms; undefined keeps the adapter's default (120 s). */
  idleTimeoutMs?: number;
  /** From `--price` or `ARBOR_MODEL_PRICE`: what the model costs, $ per million tokens (usage is priced with it; a `cost=` budget needs it). */
  cost?: ModelCost;
}

/** Endpoint settings a session recorded on an earlier run (never a key). */
export interface RecordedEndpoint {
  model?: string;
  baseURL?: string;
  api?: string;
  contextWindow?: number;
}

/** Resolves model flags: flags, then the environment, then what the session recorded. The key may be missing (reported after saving the prompt). */
export function resolveModelSettings(flags: ModelFlags, env: NodeJS.ProcessEnv = process.env, recorded: RecordedEndpoint = {}): ResolvedModelSettings {
  // An empty ARBOR_MODEL counts as unset, as an empty ARBOR_DB does.
  const parsed = parseModelSpec(flags.model ?? (env.ARBOR_MODEL || undefined) ?? recorded.model);
  if (!isProvider(parsed.provider)) {
    throw new CliError(
      `Unknown provider "${parsed.provider}": use openai, anthropic or google (e.g. --model anthropic:claude-sonnet-4-5), or --model openai:${parsed.modelId} with --base-url for any OpenAI-compatible server.`,
    );
  }
  const spec = { provider: parsed.provider, modelId: parsed.modelId, ...(parsed.thinking ? { thinking: parsed.thinking } : {}) };
  const sameProvider = recorded.model !== undefined && parseModelSpec(recorded.model).provider === spec.provider;
  const baseURLVariable = PROVIDER_BASE_URL_VARIABLES[spec.provider];
  const newBaseURL = flags.baseUrl ?? env[baseURLVariable];
  const baseURL = newBaseURL ?? (sameProvider ? recorded.baseURL : undefined);
  let api: "chat" | "responses" | undefined;
  if (spec.provider === "openai") {
    const chosen = flags.api ?? (newBaseURL === undefined && sameProvider ? recorded.api : undefined) ?? defaultOpenAIWire(baseURL);
    if (chosen !== "chat" && chosen !== "responses") throw new CliError(`Bad --api "${chosen}": use chat or responses.`);
    api = chosen;
  } else if (flags.api !== undefined) {
    throw new CliError(`--api applies to openai models only; ${spec.provider} has one wire API.`);
  }
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
  const variables = flags.apiKeyEnv !== undefined ? [flags.apiKeyEnv] : PROVIDER_KEY_VARIABLES[spec.provider];
  const apiKey = variables.map((name) => env[name]).find((value) => value !== undefined && value.length > 0);
  const priceText = flags.price ?? (env.ARBOR_MODEL_PRICE || undefined);
  const cost = priceText === undefined ? undefined : parsePrice(priceText, flags.price !== undefined ? "--price" : "ARBOR_MODEL_PRICE");
  return { spec, baseURL, ...(api ? { api } : {}), apiKey, apiKeyEnv: variables[0], contextWindow, ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}), ...(cost ? { cost } : {}) };
}

const PRICE_KEYS = { input: "input", output: "output", "cache-read": "cacheRead", "cache-write": "cacheWrite" } as const;

/**
 * Parses a model price, `input=2.5,output=10[,cache-read=1.25,cache-write=3]`, in $ per million tokens; `input` and `output` are required.
 *
 * @throws CliError naming `source` and what is wrong.
 */
export function parsePrice(text: string, source: string): ModelCost {
  const cost: Partial<Record<(typeof PRICE_KEYS)[keyof typeof PRICE_KEYS], number>> = {};
  for (const part of text.split(",")) {
    const [name, value, extra] = part.split("=").map((piece) => piece.trim());
    const key = PRICE_KEYS[name as keyof typeof PRICE_KEYS];
    const amount = value === undefined || value === "" ? Number.NaN : Number(value);
    if (key === undefined || extra !== undefined || !Number.isFinite(amount) || amount < 0) {
      throw new CliError(`Bad ${source} "${text}": expected input=<$ per million input tokens>,output=<$ per million output tokens>, optionally cache-read=… and cache-write=…, each a number ≥ 0 (the part "${part}" is not one).`);
    }
    if (cost[key] !== undefined) throw new CliError(`Bad ${source} "${text}": ${name} is given twice.`);
    cost[key] = amount;
  }
  if (cost.input === undefined || cost.output === undefined) throw new CliError(`Bad ${source} "${text}": input= and output= are both required ($ per million tokens).`);
  return cost as ModelCost;
}

function isProvider(name: string): name is ModelProvider {
  return Object.hasOwn(PROVIDER_KEY_VARIABLES, name);
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

/** What must never reach the log or the model: the key, URL passwords, and every provider key variable set in `env`. */
export function settingsSecrets(settings: ResolvedModelSettings, env: NodeJS.ProcessEnv = process.env): string[] {
  const keys = Object.values(PROVIDER_KEY_VARIABLES).flatMap((names) => names.map((name) => env[name]));
  const urls = Object.values(PROVIDER_BASE_URL_VARIABLES).map((name) => urlPassword(env[name]));
  const secrets = [settings.apiKey, urlPassword(settings.baseURL), ...keys, ...urls].filter((secret): secret is string => typeof secret === "string" && secret.length > 0);
  return [...new Set(secrets)];
}

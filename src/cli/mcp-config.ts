/**
 * The CLI's MCP servers: `--mcp <name>=<command or URL>` (repeatable; a URL is a Streamable HTTP server that may ask for OAuth, anything else a
 * command run without a shell) and `.arbor/mcp.json` in the `mcpServers` shape of Claude Desktop and Cursor, with `${VAR:-default}` read from the
 * environment. The file's servers come first; a `--mcp` of the same name replaces one. Bad values are refused naming the flag, file or field.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { parseMcpServerConfigs, type McpServerConfig } from "../adapters/mcp/config.ts";
import { McpConfigError } from "../adapters/mcp/errors.ts";
import { CliError } from "./cli-error.ts";

/** Where the project's MCP servers are listed, relative to the working folder. */
export const MCP_JSON_PATH = join(".arbor", "mcp.json");

/**
 * Splits a command line into words as a POSIX shell does for quotes and backslashes.
 * @throws CliError for an unclosed quote.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "\\" && index + 1 < line.length && '"\\$`'.includes(line[index + 1])) word += line[++index];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= "";
    } else if (char === "\\" && index + 1 < line.length) {
      word = (word ?? "") + line[++index];
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + char;
    }
  }
  if (quote) throw new CliError(`Unclosed ${quote} quote in ${JSON.stringify(line)}.`);
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * One `--mcp <name>=<command or URL>` value as a server config (see the module contract).
 * @throws CliError naming the flag.
 */
export function parseMcpFlag(value: string): McpServerConfig {
  const at = value.indexOf("=");
  const name = at > 0 ? value.slice(0, at).trim() : "";
  const target = at > 0 ? value.slice(at + 1).trim() : "";
  if (!name || !target) throw new CliError(`--mcp "${value}": use --mcp <name>=<command or URL>, e.g. --mcp docs=https://mcp.example.com/mcp or --mcp fs="npx -y @modelcontextprotocol/server-filesystem ."`);
  if (/^https?:\/\//i.test(target)) return { name, transport: "http", url: target, oauth: {} };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) throw new CliError(`--mcp "${value}": only http:// and https:// URLs are MCP servers Arbor can reach (Streamable HTTP); anything else is a command.`);
  const [command, ...args] = splitCommandLine(target);
  if (!command) throw new CliError(`--mcp "${value}": the command is empty.`);
  return { name, transport: "stdio", command, args };
}

const text = z.string();
const fileServerSchema = z.strictObject({
  type: z.enum(["stdio", "http", "streamable-http", "sse"]).optional(),
  command: text.min(1).optional(),
  args: z.array(text).optional(),
  env: z.record(z.string(), text).optional(),
  cwd: text.min(1).optional(),
  url: text.min(1).optional(),
  headers: z.record(z.string(), text).optional(),
  oauth: z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional(),
  callTimeoutMs: z.number().optional(),
  replay: z.enum(["safe", "unsafe"]).optional(),
  disabled: z.boolean().optional(),
});
const fileSchema = z.strictObject({ mcpServers: z.record(z.string(), fileServerSchema) });

/** `${VAR}` / `${VAR:-default}` from `env`, in every string of `value`. */
function expand(value: unknown, env: NodeJS.ProcessEnv, where: string): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      throw new CliError(`${where}: \${${name}} is not set in the environment (set it, or write \${${name}:-default}).`);
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expand(item, env, `${where}[${index}]`));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expand(item, env, `${where}.${key}`)]));
  return value;
}

/**
 * The servers of a `mcp.json` file (see the module contract); `[]` when it does not exist.
 * @throws CliError naming the file and the field.
 */
export function loadMcpJson(path: string, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  if (!existsSync(path)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new CliError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const result = fileSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new CliError(`${path}: ${issue.path.join(".") || "(top)"}: ${issue.message} (format: { "mcpServers": { "<name>": { "command": …, "args": [] } or { "url": … } } })`);
  }
  const servers: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(result.data.mcpServers)) {
    const where = `${path}: mcpServers.${name}`;
    if (raw.disabled) continue;
    const entry = expand(raw, env, where) as typeof raw;
    const kind = entry.type ?? (entry.url !== undefined ? "http" : "stdio");
    if (kind === "sse") throw new CliError(`${where}: "type": "sse" (the old HTTP+SSE transport) is not supported; use the server's Streamable HTTP endpoint ("type": "http").`);
    const timeout = { ...(entry.callTimeoutMs !== undefined ? { callTimeoutMs: entry.callTimeoutMs } : {}), ...(entry.replay ? { replay: entry.replay } : {}) };
    if (kind === "stdio") {
      if (entry.command === undefined || entry.url !== undefined) throw new CliError(`${where}: a stdio server has "command" (and "args", "env", "cwd"), not "url".`);
      servers.push({ name, transport: "stdio", command: entry.command, ...(entry.args ? { args: entry.args } : {}), ...(entry.env ? { env: entry.env } : {}), ...(entry.cwd ? { cwd: resolve(path, "..", "..", entry.cwd) } : {}), ...timeout });
    } else {
      if (entry.url === undefined || entry.command !== undefined) throw new CliError(`${where}: an HTTP server has "url" (and "headers", "oauth"), not "command".`);
      servers.push({ name, transport: "http", url: entry.url, ...(entry.headers ? { headers: entry.headers } : {}), ...(entry.oauth === false ? {} : { oauth: entry.oauth ?? {} }), ...timeout } as McpServerConfig);
    }
  }
  return servers;
}

/**
 * The CLI's servers: `.arbor/mcp.json` of `cwd`, then the `--mcp` flags (a flag replaces the file's server of the same name), validated.
 * @throws CliError naming the flag, the file or the field.
 */
export function resolveMcpServers(flags: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  const fromFlags = flags.map(parseMcpFlag);
  const names = new Set(fromFlags.map((server) => server.name));
  const fromFile = loadMcpJson(join(cwd, MCP_JSON_PATH), env).filter((server) => !names.has(server.name));
  // A stdio server runs in the project folder unless its entry names a `cwd` (a command such as
  // `server-filesystem .` must see the project, not the folder `arbor` was started in).
  const servers = [...fromFile, ...fromFlags].map((server) => (server.transport === "stdio" && server.cwd === undefined ? { ...server, cwd } : server));
  try {
    return parseMcpServerConfigs(servers);
  } catch (error) {
    if (McpConfigError.isInstance(error)) throw new CliError(`${error.message.replace(/servers\[(\d+)\]/g, (_match, index: string) => `MCP server "${servers[Number(index)]?.name ?? index}"`)} (from --mcp or ${MCP_JSON_PATH}).`);
    throw error;
  }
}

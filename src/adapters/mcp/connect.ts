/**
 * Connecting to MCP servers and exposing their tools as {@link AgentTool}s named `<server>__<tool>`, validated with ajv. Configs are validated
 * first; servers connect in parallel and one that fails gives a diagnostic, never failing the others. Calls have a timeout (default 60 s) and fail
 * with `McpToolError` or `McpServerUnavailableError`, so a run never hangs. The tool list is a snapshot; `close()` closes every server.
 * The MCP SDK (`server-link.ts`, `oauth.ts`) is imported on the first call: the root entry reaches this module.
 */
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentTool } from "../../core/tools.ts";
import { defineJsonSchemaTool } from "../tools/tool-schema.ts";
import { parseMcpServerConfigs, type McpServerConfig } from "./config.ts";
import type { McpElicitationHandler } from "./elicitation.ts";
import { McpConfigError } from "./errors.ts";
import type { McpAuthOptions } from "./oauth.ts";
import { createMemoryMcpAuthStore } from "./oauth-store.ts";
import type { McpServerLink } from "./server-link.ts";
import { mcpToolName } from "./tool-names.ts";
import type { McpConnection, McpDiagnostic } from "./types.ts";
import { ignored } from "../../core/ignored.ts";

/**
 * Default timeout of one tool call, in ms.
 * @example
 * const callTimeoutMs = DEFAULT_MCP_CALL_TIMEOUT_MS * 2; // 120 s for a slow server
 */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;
/**
 * Default timeout of connecting (spawn + initialize) and of listing tools, in ms.
 * @example
 * const connectTimeoutMs = DEFAULT_MCP_CONNECT_TIMEOUT_MS; // 30 s
 */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

/** Options of {@link connectMcpServers}. */
export interface ConnectMcpServersOptions {
  /** Timeout of one tool call in ms (default 60 000). */
  callTimeoutMs?: number;
  /** Timeout of connecting and of listing tools, per server, in ms (default 30 000). */
  connectTimeoutMs?: number;
  /** Called for every diagnostic as it is found, including later ones (a server exiting). Must not throw. */
  onDiagnostic?: (diagnostic: McpDiagnostic) => void;
  /** OAuth of the servers with `oauth`: whose tokens (`tenant`, default `"default"`) and where they are kept (default in memory). */
  auth?: McpAuthOptions;
  /** Answers the servers' requests for user input; without it the client does not declare the capability. */
  onElicitation?: McpElicitationHandler;
}

function checkTimeout(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new McpConfigError(`Invalid MCP options: ${name} must be a positive integer of ms, got ${String(value)}`);
  return value;
}

function toolFor(link: McpServerLink, tool: McpTool, name: string): AgentTool {
  const { $schema: _dialect, ...parameters } = tool.inputSchema as Record<string, unknown>;
  const defined = defineJsonSchemaTool<Record<string, unknown>>({
    name,
    label: tool.title ?? tool.annotations?.title ?? tool.name,
    description: tool.description ?? tool.title ?? `Tool "${tool.name}" of MCP server "${link.name}".`,
    parameters: tool.inputSchema as Record<string, unknown>,
    execute: (args, context) => link.call(tool.name, args, context),
  });
  const hints = tool.annotations;
  const replay = link.config.replay ?? (hints?.readOnlyHint === true || hints?.idempotentHint === true ? "safe" : undefined);
  return { ...defined, parameters, ...(replay ? { replay } : {}) } as AgentTool;
}

/**
 * Connects to MCP servers and returns their tools as Arbor tools.
 * @param configs the servers (see `config.ts` for the shapes)
 * @param options timeouts (ms) and a diagnostic listener
 * @returns the tools, a live diagnostics list, server statuses and `close()`
 * @throws McpConfigError (code `MCP_CONFIG_INVALID`) for an invalid config or option; nothing is started then.
 *   Server failures are never thrown: they are diagnostics.
 * @example
 * const { tools, diagnostics, close } = await connectMcpServers([{ name: "docs", transport: "http", url: "http://127.0.0.1:3001/mcp" }]);
 */
export async function connectMcpServers(configs: readonly McpServerConfig[], options: ConnectMcpServersOptions = {}): Promise<McpConnection> {
  const servers = parseMcpServerConfigs(configs);
  const timeouts = {
    callTimeoutMs: checkTimeout("callTimeoutMs", options.callTimeoutMs, DEFAULT_MCP_CALL_TIMEOUT_MS),
    connectTimeoutMs: checkTimeout("connectTimeoutMs", options.connectTimeoutMs, DEFAULT_MCP_CONNECT_TIMEOUT_MS),
  };
  const diagnostics: McpDiagnostic[] = [];
  const report = (diagnostic: McpDiagnostic) => {
    diagnostics.push(diagnostic);
    try {
      options.onDiagnostic?.(diagnostic);
    } catch (error) {
      ignored("an onDiagnostic listener threw; a listener must not break the connection", error);
    }
  };
  const [{ McpServerLink }, { oauthProviderFor }] = await Promise.all([import("./server-link.ts"), import("./oauth.ts")]);
  const memory = createMemoryMcpAuthStore();
  const links = servers.map(
    (config) => new McpServerLink(config, timeouts, report, config.transport === "http" && config.oauth ? oauthProviderFor(config, options.auth, memory) : undefined, options.onElicitation),
  );
  const listings = await Promise.all(links.map((link) => link.start()));

  const tools: AgentTool[] = [];
  const taken = new Map<string, string>();
  links.forEach((link, index) => {
    for (const tool of listings[index]) {
      const name = mcpToolName(link.name, tool.name);
      const owner = taken.get(name);
      const at = Date.now();
      if (owner !== undefined) {
        report({ severity: "error", code: "tool-name-collision", server: link.name, tool: tool.name, message: `tool name "${name}" is already used by ${owner}; this tool is not offered`, at });
        continue;
      }
      try {
        tools.push(toolFor(link, tool, name));
      } catch (error) {
        report({ severity: "error", code: "tool-schema-invalid", server: link.name, tool: tool.name, message: `${error instanceof Error ? error.message : String(error)}; this tool is not offered`, at });
        continue;
      }
      taken.set(name, `tool "${tool.name}" of server "${link.name}"`);
      link.toolNames.push(name);
    }
  });

  let closing: Promise<void> | undefined;
  return {
    tools,
    diagnostics,
    servers: links,
    close() {
      closing ??= Promise.all(links.map((link) => link.close())).then(() => undefined);
      return closing;
    },
  };
}

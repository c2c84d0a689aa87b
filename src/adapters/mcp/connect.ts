/**
 * Connecting to MCP servers and exposing their tools as Arbor tools.
 *
 * Contract (ours, with `@modelcontextprotocol/sdk` 1.32: Client,
 * StdioClientTransport, StreamableHTTPClientTransport):
 * - configs are validated first (`McpConfigError` names the field; nothing
 *   starts). Servers then connect in parallel; one that fails to start or list
 *   its tools gives a diagnostic and no tools, and never fails the others;
 * - each server tool becomes an {@link AgentTool} named `<server>__<tool>`
 *   (`tool-names.ts`); its `parameters` is the tool's `inputSchema` (minus
 *   `$schema`) and arguments are validated with ajv (`defineJsonSchemaTool`,
 *   the harness's JSON-Schema validator) once, before `execute`. A schema ajv
 *   cannot compile, or a name clash after sanitizing, drops that tool with a
 *   diagnostic;
 * - `execute` calls `tools/call` with the loop's AbortSignal and a per-call
 *   timeout (`callTimeoutMs`, default 60 000 ms; a server's own
 *   `callTimeoutMs` wins); progress notifications stream as tool updates;
 *   content maps to text/image blocks (`content.ts`); `isError` results,
 *   protocol errors and timeouts throw `McpToolError`, a crashed or closed
 *   server throws `McpServerUnavailableError`, so the loop records an error
 *   result and the run never hangs;
 * - the tool list is a snapshot taken at connect time (`tools/list_changed`
 *   is not followed); a crashed server is not restarted;
 * - `close()` closes every server; call it when the session ends.
 *
 * @example
 * ```ts
 * const mcp = await connectMcpServers([
 *   { name: "everything", transport: "stdio", command: "npx", args: ["mcp-server-everything", "stdio"] },
 * ]);
 * try { await runAgent({ tools: [...builtinTools, ...mcp.tools] }); } finally { await mcp.close(); }
 * ```
 */
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentTool } from "../../core/tools.ts";
import { defineJsonSchemaTool } from "../tools/tool-schema.ts";
import { parseMcpServerConfigs, type McpServerConfig } from "./config.ts";
import { McpConfigError } from "./errors.ts";
import { McpServerLink } from "./server-link.ts";
import { mcpToolName } from "./tool-names.ts";
import type { McpConnection, McpDiagnostic } from "./types.ts";

/**
 * Default timeout of one tool call, in ms.
 *
 * @example
 * ```ts
 * const callTimeoutMs = DEFAULT_MCP_CALL_TIMEOUT_MS * 2; // 120 s for a slow server
 * ```
 */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;
/**
 * Default timeout of connecting (spawn + initialize) and of listing tools, in ms.
 *
 * @example
 * ```ts
 * const connectTimeoutMs = DEFAULT_MCP_CONNECT_TIMEOUT_MS; // 30 s
 * ```
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
  return { ...defined, parameters } as AgentTool;
}

/**
 * Connects to MCP servers and returns their tools as Arbor tools.
 *
 * @param configs the servers (see `config.ts` for the shapes)
 * @param options timeouts (ms) and a diagnostic listener
 * @returns the tools, a live diagnostics list, server statuses and `close()`
 * @throws McpConfigError (code `MCP_CONFIG_INVALID`) for an invalid config or option; nothing is started then.
 *   Server failures are never thrown: they are diagnostics.
 * @example
 * ```ts
 * const { tools, diagnostics, close } = await connectMcpServers([{ name: "docs", transport: "http", url: "http://127.0.0.1:3001/mcp" }]);
 * ```
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
    } catch {
      // a listener's failure must not break the connection
    }
  };
  const links = servers.map((config) => new McpServerLink(config, timeouts, report));
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

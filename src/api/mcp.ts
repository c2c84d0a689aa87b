/**
 * `arbor-agent/mcp`: MCP servers as tools (through `@modelcontextprotocol/sdk`): configuration, connection, naming and content mapping.
 *
 * Contract (ours): an explicit list; an addition or removal is a deliberate change that the
 * export-list snapshot (`test/package/exports.test.ts`) shows. The root entry `arbor-agent` holds
 * what a user needs first; everything here is one import further.
 *
 * @example
 * ```ts
 * import { connectMcpServers } from "arbor-agent/mcp";
 * ```
 */
export {
  connectMcpServers,
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  DEFAULT_MCP_CONNECT_TIMEOUT_MS,
  type ConnectMcpServersOptions,
} from "../adapters/mcp/connect.ts";
export {
  parseMcpServerConfigs,
  type McpStdioServerConfig,
  type McpHttpServerConfig,
  type McpServerConfig,
} from "../adapters/mcp/config.ts";
export {
  type McpDiagnosticCode,
  type McpDiagnostic,
  type McpServerState,
  type McpServerStatus,
  type McpConnection,
} from "../adapters/mcp/types.ts";
export {
  McpConfigError,
  McpToolError,
  McpServerUnavailableError,
} from "../adapters/mcp/errors.ts";
export {
  mcpToolName,
  MAX_TOOL_NAME_LENGTH,
} from "../adapters/mcp/tool-names.ts";
export {
  mapMcpContent,
} from "../adapters/mcp/content.ts";

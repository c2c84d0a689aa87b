/**
 * `arbor-agent/mcp`: MCP servers as tools (through `@modelcontextprotocol/sdk`): configuration, connection, naming and content mapping.
 * @example
 * import { connectMcpServers } from "arbor-agent/mcp";
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
  McpAuthRequiredError,
} from "../adapters/mcp/errors.ts";
export {
  authorizeMcpServer,
  finishMcpAuthorization,
  type McpAuthOptions,
} from "../adapters/mcp/oauth.ts";
export {
  DEFAULT_MCP_REDIRECT_URL,
  type McpOAuthSettings,
} from "../adapters/mcp/oauth-provider.ts";
export {
  createFileMcpAuthStore,
  createMemoryMcpAuthStore,
  type McpAuthStore,
  type McpAuthRecord,
} from "../adapters/mcp/oauth-store.ts";
export {
  mcpToolName,
  MAX_TOOL_NAME_LENGTH,
} from "../adapters/mcp/tool-names.ts";
export {
  mapMcpContent,
} from "../adapters/mcp/content.ts";
export {
  type McpElicitationHandler,
  type McpElicitationRequest,
  type McpElicitationAnswer,
} from "../adapters/mcp/elicitation.ts";
export {
  listElicitations,
  answerElicitation,
  ElicitationNotFoundError,
  ElicitationConflictError,
  ElicitationAnswerInvalidError,
  type ElicitationRecord,
  type ElicitationAnswer,
  type ElicitationVia,
} from "../harness/elicitations.ts";

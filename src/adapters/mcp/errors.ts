/**
 * Errors of the MCP adapter: `McpConfigError` (before anything starts, naming the field), `McpToolError` and `McpServerUnavailableError` (thrown
 * from `execute`, becoming error tool results; `details` `{ server, tool }`), `McpAuthRequiredError` (`details.authorizationUrl` for consent).
 */
import { ArborError, type ArborErrorOptions } from "../../core/errors.ts";

/**
 * A server configuration is invalid (code `MCP_CONFIG_INVALID`); the message names the field. Nothing was started.
 * @example
 * new McpConfigError("Invalid MCP server configuration: servers[0].url: must be an http:// or https:// URL");
 */
export class McpConfigError extends ArborError {
  static readonly code = "MCP_CONFIG_INVALID";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(McpConfigError.code, message, options);
  }
  static override isInstance(error: unknown): error is McpConfigError {
    return ArborError.isInstance(error) && error.code === McpConfigError.code;
  }
}

/**
 * A tool call failed: the server answered with an error or `isError`, or the call timed out (code `MCP_TOOL_FAILED`).
 * `details` is `{ server, tool }`.
 * @example
 * if (McpToolError.isInstance(error)) console.warn(error.details.server, error.message);
 */
export class McpToolError extends ArborError {
  static readonly code = "MCP_TOOL_FAILED";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(McpToolError.code, message, options);
  }
  static override isInstance(error: unknown): error is McpToolError {
    return ArborError.isInstance(error) && error.code === McpToolError.code;
  }
}

/**
 * The tool's server has exited, or the connection was closed (code `MCP_SERVER_UNAVAILABLE`). `details` is `{ server, tool }`.
 * @example
 * if (McpServerUnavailableError.isInstance(error)) await reconnect(error.details.server as string);
 */
export class McpServerUnavailableError extends ArborError {
  static readonly code = "MCP_SERVER_UNAVAILABLE";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(McpServerUnavailableError.code, message, options);
  }
  static override isInstance(error: unknown): error is McpServerUnavailableError {
    return ArborError.isInstance(error) && error.code === McpServerUnavailableError.code;
  }
}

/**
 * An MCP server that uses OAuth needs a person's consent before Arbor can use it (code `MCP_AUTH_REQUIRED`): there is no token for this tenant, or
 * the refresh token was refused. `details` is `{ server, tenant, authorizationUrl, tool? }`: open `authorizationUrl` in a browser, then pass the
 * `code` the redirect carries to `finishMcpAuthorization`.
 * @example
 * if (McpAuthRequiredError.isInstance(error)) console.log(`Open ${error.details.authorizationUrl as string}`);
 */
export class McpAuthRequiredError extends ArborError {
  static readonly code = "MCP_AUTH_REQUIRED";
  constructor(message: string, options: ArborErrorOptions = {}) {
    super(McpAuthRequiredError.code, message, options);
  }
  static override isInstance(error: unknown): error is McpAuthRequiredError {
    return ArborError.isInstance(error) && error.code === McpAuthRequiredError.code;
  }
}

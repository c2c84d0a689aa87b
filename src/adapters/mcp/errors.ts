/**
 * Errors of the MCP adapter, all {@link ArborError}s with a stable `code`.
 *
 * Contract (ours):
 * - `McpConfigError` (`MCP_CONFIG_INVALID`) is thrown by `connectMcpServers`
 *   before anything starts, naming the bad field (`servers[1].url: ...`);
 * - `McpToolError` (`MCP_TOOL_FAILED`) and `McpServerUnavailableError`
 *   (`MCP_SERVER_UNAVAILABLE`) are thrown from an MCP tool's `execute`; the
 *   agent loop turns the throw into an error tool result whose text is the
 *   message. `details` carries `{ server, tool }`.
 *
 * @example
 * ```ts
 * try { await connectMcpServers([{ name: "bad name", transport: "stdio", command: "x" }]); }
 * catch (error) { if (McpConfigError.isInstance(error)) console.error(error.message); }
 * ```
 */
import { ArborError, type ArborErrorOptions } from "../../core/errors.ts";

/**
 * A server configuration is invalid (code `MCP_CONFIG_INVALID`); the message names the field. Nothing was started.
 *
 * @example
 * ```ts
 * new McpConfigError("Invalid MCP server configuration: servers[0].url: must be an http:// or https:// URL");
 * ```
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
 *
 * @example
 * ```ts
 * if (McpToolError.isInstance(error)) console.warn(error.details.server, error.message);
 * ```
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
 * The tool's server has exited, or the connection was closed (code `MCP_SERVER_UNAVAILABLE`).
 * `details` is `{ server, tool }`.
 *
 * @example
 * ```ts
 * if (McpServerUnavailableError.isInstance(error)) await reconnect(error.details.server as string);
 * ```
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

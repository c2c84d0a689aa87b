/**
 * MCP tools: connect to Model Context Protocol servers (stdio, Streamable
 * HTTP) and use their tools as Arbor tools. See `connect.ts` for the contract
 * and docs/mcp.md for the guide.
 *
 * @example
 * ```ts
 * import { connectMcpServers } from "./adapters/mcp/index.ts";
 * const mcp = await connectMcpServers([{ name: "fs", transport: "stdio", command: "mcp-fs" }]);
 * await mcp.close();
 * ```
 */
export * from "./types.ts";
export * from "./errors.ts";
export * from "./config.ts";
export * from "./tool-names.ts";
export * from "./content.ts";
export * from "./connect.ts";

/**
 * MCP tools: connect to Model Context Protocol servers (stdio, Streamable HTTP) and use their tools as Arbor tools. See `connect.ts` for the contract
 * and docs/mcp.md for the guide.
 */
export * from "./types.ts";
export * from "./errors.ts";
export * from "./config.ts";
export * from "./tool-names.ts";
export * from "./content.ts";
export * from "./connect.ts";
export * from "./oauth.ts";
export * from "./oauth-provider.ts";
export * from "./oauth-store.ts";
export * from "./elicitation.ts";

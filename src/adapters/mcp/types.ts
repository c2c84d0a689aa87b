/**
 * Public types of the MCP adapter. Diagnostics are data, never thrown (`error`: unusable, `warning`: degraded); {@link McpConnection.diagnostics} is
 * a live array that later problems are appended to, in order.
 */
import type { AgentTool } from "../../core/tools.ts";

/**
 * Stable diagnostic codes: `connect-failed`, `auth-required` (an OAuth server needs a person's consent: `authorizationUrl`), `list-tools-failed`,
 * `server-exited` (errors: the server's tools fail), `tool-schema-invalid`, `tool-name-collision` (errors: that tool is not offered),
 * `transport-error` (warning; at most 10 per server).
 */
export type McpDiagnosticCode =
  | "connect-failed"
  | "auth-required"
  | "list-tools-failed"
  | "server-exited"
  | "tool-schema-invalid"
  | "tool-name-collision"
  | "transport-error";

/** A problem with an MCP server or one of its tools. */
export interface McpDiagnostic {
  severity: "error" | "warning";
  code: McpDiagnosticCode;
  /** The configured server name. */
  server: string;
  /** The server's own tool name, when one tool is concerned. */
  tool?: string;
  /** One line for humans; for stdio servers it may end with the tail of the server's stderr. */
  message: string;
  /** When it was found, epoch ms. */
  at: number;
  /** `auth-required`: the page where a person consents (OAuth), when the server gave one. */
  authorizationUrl?: string;
}

/** `connecting` → `connected` → (`exited` | `closed`), or `connecting` → `failed`. */
export type McpServerState = "connecting" | "connected" | "failed" | "exited" | "closed";

/** Live status of one configured server. */
export interface McpServerStatus {
  readonly name: string;
  readonly transportKind: "stdio" | "http";
  readonly state: McpServerState;
  /** The child's pid while a stdio server runs, else null. */
  readonly pid: number | null;
  /** Arbor names of the tools offered from this server. */
  readonly toolNames: readonly string[];
  /** The server's reported implementation name and version. */
  readonly serverInfo?: { name: string; version: string };
}

/** What `connectMcpServers` returns. */
export interface McpConnection {
  /** One Arbor tool per offered MCP tool, servers in config order, each server's tools in its listing order. */
  tools: AgentTool[];
  /** Live list of diagnostics (see the module contract). */
  diagnostics: McpDiagnostic[];
  /** One status per configured server, in config order. */
  servers: McpServerStatus[];
  /** Closes every server (idempotent). After it, every tool throws `McpServerUnavailableError`. */
  close(): Promise<void>;
}

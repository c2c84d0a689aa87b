/**
 * An MCP server's request for user input (`elicitation/create`, form mode) and what answers it; the harness makes the wait durable. The request
 * names the tool call in flight on that server when there is one; the server's call timeouts pause while the handler runs; `signal` aborts when the
 * server cancels or the call ends; a throwing handler fails the server's request.
 * @example
 * const onElicitation: McpElicitationHandler = async (request) => ({ action: "accept", content: { name: "Ada" } });
 * const mcp = await connectMcpServers(configs, { onElicitation });
 */

/** A server's request for input, as Arbor passes it on. */
export interface McpElicitationRequest {
  /** The configured server name. */
  server: string;
  /** The server's tool whose call got the request (absent when several calls were in flight). */
  tool?: string;
  /** The Arbor tool call id of that call. */
  toolCallId?: string;
  /** What the server asks, for a person. */
  message: string;
  /** JSON Schema of the answer's `content`: an object of primitive properties. */
  requestedSchema: Record<string, unknown>;
  /** Aborts when the server cancels the request, or the call it belongs to has ended. */
  signal: AbortSignal;
}

/** An answer: MCP's `accept` (with values), `decline` or `cancel`. */
export type McpElicitationAnswer =
  | { action: "accept"; content: Record<string, string | number | boolean | string[]> }
  | { action: "decline" }
  | { action: "cancel" };

/**
 * Answers a server's request for input (see the module contract).
 * @example
 * const decline: McpElicitationHandler = async () => ({ action: "decline" });
 */
export type McpElicitationHandler = (request: McpElicitationRequest) => Promise<McpElicitationAnswer>;

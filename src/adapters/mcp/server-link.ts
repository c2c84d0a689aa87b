/**
 * One live connection to an MCP server: start, list tools, call, close.
 *
 * Contract (ours, on `@modelcontextprotocol/sdk` 1.32's Client):
 * - `start()` never throws: failures to spawn, connect (bounded by
 *   `connectTimeoutMs`) or list tools become diagnostics and `state: "failed"`;
 *   a failed server is closed at once (no stray child process);
 * - every call is bounded by its timeout (ms) and honours the caller's
 *   AbortSignal (the SDK sends `notifications/cancelled`);
 * - a server that goes away (child exited, connection closed) moves to
 *   `state: "exited"` and reports one `server-exited` diagnostic with the tail
 *   of its stderr; pending calls reject at once (the SDK rejects them when the
 *   transport closes) and later calls throw `McpServerUnavailableError`
 *   without touching the transport. No automatic restart. Over Streamable
 *   HTTP, once the SDK gives up reconnecting a response stream, the pending
 *   calls of that server fail with `McpServerUnavailableError` (their answers
 *   can no longer arrive); later calls try the server again;
 * - `isError` results and protocol errors throw `McpToolError`;
 * - `close()` is idempotent; stdio children get stdin closed, then SIGTERM,
 *   then SIGKILL (the SDK's sequence, 2 s apart).
 *
 * @example
 * ```ts
 * const link = new McpServerLink(config, { callTimeoutMs: 60_000, connectTimeoutMs: 30_000 }, console.warn);
 * const tools = await link.start();
 * ```
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolExecuteContext, ToolResult } from "../../core/tools.ts";
import type { McpServerConfig } from "./config.ts";
import { errorText, mapMcpContent } from "./content.ts";
import { McpServerUnavailableError, McpToolError } from "./errors.ts";
import type { McpDiagnostic, McpServerState, McpServerStatus } from "./types.ts";

const STDERR_TAIL_CHARS = 2000;
const MAX_TRANSPORT_ERRORS = 10;
const CLIENT_INFO = { name: "arbor", version: "0.1.0" };
/** The SDK's Streamable HTTP message once it stops reconnecting a response stream. */
const GAVE_UP = /Maximum reconnection attempts/i;

/** Timeouts of one link, in ms. */
export interface McpLinkTimeouts {
  callTimeoutMs: number;
  connectTimeoutMs: number;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A connection to one server; also its public {@link McpServerStatus}. Internal to
 * `connectMcpServers` (not re-exported from the MCP index).
 *
 * @example
 * ```ts
 * const link = new McpServerLink(config, timeouts, report);
 * const listed = await link.start();
 * const result = await link.call(listed[0].name, {}, context);
 * await link.close();
 * ```
 */
export class McpServerLink implements McpServerStatus {
  state: McpServerState = "connecting";
  toolNames: string[] = [];
  serverInfo?: { name: string; version: string };
  private readonly client = new Client(CLIENT_INFO, { capabilities: {} });
  private transport?: Transport;
  private stderrTail = "";
  private transportErrors = 0;
  private closing?: Promise<void>;
  private readonly pending = new Map<AbortController, string>();

  constructor(
    readonly config: McpServerConfig,
    private readonly timeouts: McpLinkTimeouts,
    private readonly report: (diagnostic: McpDiagnostic) => void,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get transportKind(): "stdio" | "http" {
    return this.config.transport;
  }

  /** The child's pid (stdio, while running), else null. */
  get pid(): number | null {
    return this.transport instanceof StdioClientTransport ? this.transport.pid : null;
  }

  private diagnose(severity: McpDiagnostic["severity"], code: McpDiagnostic["code"], message: string, tool?: string): void {
    this.report({ severity, code, server: this.name, message, ...(tool === undefined ? {} : { tool }), at: Date.now() });
  }

  private stderrNote(): string {
    const tail = this.stderrTail.trim();
    return tail ? `; last stderr: ${tail.slice(-500)}` : "";
  }

  private createTransport(): Transport {
    const config = this.config;
    if (config.transport === "http") {
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      ...(config.env ? { env: config.env } : {}),
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }

  /** Connects and lists the server's tools. Never throws; `[]` on failure. */
  async start(): Promise<McpTool[]> {
    this.client.onclose = () => {
      if (this.state !== "connected") return;
      this.state = "exited";
      const what = this.config.transport === "stdio" ? "process exited" : "connection closed";
      this.diagnose("error", "server-exited", `MCP server "${this.name}" ${what}; its tools now return errors${this.stderrNote()}`);
    };
    this.client.onerror = (error) => {
      if (this.state !== "connected") return;
      const message = messageOf(error);
      if (++this.transportErrors <= MAX_TRANSPORT_ERRORS) this.diagnose("warning", "transport-error", `MCP server "${this.name}" transport error: ${message}`);
      // Streamable HTTP gave up re-opening the response stream: answers to pending calls can no longer arrive.
      if (GAVE_UP.test(message)) this.failPending(`lost the connection to MCP server "${this.name}" (${message})`);
    };
    try {
      this.transport = this.createTransport();
      await this.client.connect(this.transport, { timeout: this.timeouts.connectTimeoutMs });
    } catch (error) {
      await this.fail("connect-failed", `cannot connect to MCP server "${this.name}": ${messageOf(error)}`);
      return [];
    }
    if (this.state !== "connecting") {
      await this.client.close().catch(() => undefined);
      return [];
    }
    this.state = "connected";
    const version = this.client.getServerVersion();
    if (version) this.serverInfo = { name: version.name, version: version.version };
    if (!this.client.getServerCapabilities()?.tools) return [];
    try {
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.timeouts.connectTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined && tools.length < 10_000);
      return tools;
    } catch (error) {
      await this.fail("list-tools-failed", `cannot list the tools of MCP server "${this.name}": ${messageOf(error)}`);
      return [];
    }
  }

  private async fail(code: McpDiagnostic["code"], message: string): Promise<void> {
    this.state = "failed";
    this.diagnose("error", code, `${message}${this.stderrNote()}`);
    await this.client.close().catch(() => undefined);
    await this.transport?.close().catch(() => undefined);
  }

  /** Calls tool `toolName`; throws typed errors (see the module contract). */
  async call(toolName: string, args: Record<string, unknown>, context: ToolExecuteContext): Promise<ToolResult> {
    const details = { server: this.name, tool: toolName };
    if (this.state !== "connected") {
      const why = this.state === "closed" ? "has been closed" : this.state === "exited" ? "has exited" : "is not connected";
      throw new McpServerUnavailableError(`MCP server "${this.name}" ${why}, so tool "${toolName}" cannot run${this.stderrNote()}`, { details });
    }
    const timeout = this.config.callTimeoutMs ?? this.timeouts.callTimeoutMs;
    const lost = new AbortController();
    this.pending.set(lost, toolName);
    let result: Awaited<ReturnType<Client["callTool"]>>;
    try {
      result = await this.client.callTool({ name: toolName, arguments: args }, undefined, {
        signal: AbortSignal.any([context.signal, lost.signal]),
        timeout,
        onprogress: (progress) => {
          const total = progress.total === undefined ? "" : `/${progress.total}`;
          const note = progress.message ? `: ${progress.message}` : "";
          context.onUpdate({ content: [{ type: "text", text: `progress ${progress.progress}${total}${note}` }] });
        },
      });
    } catch (error) {
      if (context.signal.aborted) throw context.signal.reason ?? error;
      if (lost.signal.aborted) throw lost.signal.reason;
      const state = this.state as McpServerState; // may have changed while the call was pending
      if (state === "closed") {
        throw new McpServerUnavailableError(`MCP server "${this.name}" was closed while tool "${toolName}" was running`, { cause: error, details });
      }
      if (state === "exited" || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
        throw new McpServerUnavailableError(`MCP server "${this.name}" exited while tool "${toolName}" was running${this.stderrNote()}`, { cause: error, details });
      }
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new McpToolError(`MCP tool "${toolName}" on server "${this.name}" did not answer within ${timeout} ms`, { cause: error, details });
      }
      throw new McpToolError(`MCP server "${this.name}" failed tool "${toolName}": ${messageOf(error)}`, { cause: error, details });
    } finally {
      this.pending.delete(lost);
    }
    const content = mapMcpContent(result as { content?: unknown; structuredContent?: unknown });
    if (result.isError === true) {
      throw new McpToolError(`MCP tool "${toolName}" on server "${this.name}" returned an error: ${errorText(content)}`, { details });
    }
    const extra = {
      ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
      ...(result._meta === undefined ? {} : { meta: result._meta }),
    };
    return { content, details: { ...details, ...extra } };
  }

  /** Fails every pending call with `McpServerUnavailableError` (their answers can no longer arrive). */
  private failPending(reason: string): void {
    for (const [controller, toolName] of this.pending) {
      controller.abort(new McpServerUnavailableError(`${reason} while tool "${toolName}" was running`, { details: { server: this.name, tool: toolName } }));
    }
    this.pending.clear();
  }

  /** Closes the connection (idempotent). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const wasUsable = this.state === "connected" || this.state === "connecting";
      this.state = "closed";
      if (wasUsable) {
        await this.client.close().catch(() => undefined);
        await this.transport?.close().catch(() => undefined);
      }
    })();
    return this.closing;
  }
}

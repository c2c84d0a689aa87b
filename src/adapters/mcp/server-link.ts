/**
 * One live connection to an MCP server: start, list tools, call, close. `start()` never throws (failures are diagnostics); every call has a timeout
 * and honours its AbortSignal; a server that goes away reports one `server-exited` diagnostic and its pending and later calls fail with
 * `McpServerUnavailableError` (no restart); `close()` is idempotent (stdin closed, SIGTERM, SIGKILL).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ElicitRequestSchema, ErrorCode, McpError, type ElicitResult, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolExecuteContext, ToolResult } from "../../core/tools.ts";
import type { McpServerConfig } from "./config.ts";
import { errorText, mapMcpContent } from "./content.ts";
import { McpServerUnavailableError, McpToolError } from "./errors.ts";
import { authRequired, needsConsent } from "./oauth.ts";
import type { McpOAuthProvider } from "./oauth-provider.ts";
import type { McpElicitationHandler } from "./elicitation.ts";
import type { McpDiagnostic, McpServerState, McpServerStatus } from "./types.ts";
import { ignoreError } from "../../core/ignored.ts";

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

/** A tool call in flight: what an elicitation is attributed to; its timeout pauses while one waits. */
interface PendingCall {
  tool: string;
  toolCallId: string;
  /** Aborts once the call has ended (answered, failed or aborted). */
  ended: AbortSignal;
  /** Stops the call timeout (an answer is awaited) and restarts it in full. */
  pauseTimeout(): void;
  restartTimeout(): void;
}

/** The SDK's own request timeout is not used for calls (ours pauses while an elicitation waits): 2^31-1 ms. */
const NO_SDK_TIMEOUT = 2_147_483_647;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A connection to one server; also its public {@link McpServerStatus}. Internal to `connectMcpServers` (not re-exported from the MCP index). */
export class McpServerLink implements McpServerStatus {
  state: McpServerState = "connecting";
  toolNames: string[] = [];
  serverInfo?: { name: string; version: string };
  private readonly client: Client;
  private transport?: Transport;
  private stderrTail = "";
  private transportErrors = 0;
  private closing?: Promise<void>;
  private readonly pending = new Map<AbortController, PendingCall>();
  /** Set when the server needs a person's consent (OAuth): every call throws it. */
  private authError?: Error;

  constructor(
    readonly config: McpServerConfig,
    private readonly timeouts: McpLinkTimeouts,
    private readonly report: (diagnostic: McpDiagnostic) => void,
    private readonly oauth?: McpOAuthProvider,
    private readonly elicit?: McpElicitationHandler,
  ) {
    this.client = new Client(CLIENT_INFO, { capabilities: elicit ? { elicitation: { form: {} } } : {} });
    if (elicit) this.client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.onElicitation(request.params, extra.signal));
  }

  /** A server's `elicitation/create`: attributed to its only call in flight, that call's timeout paused until the answer; URL mode is declined. */
  private async onElicitation(params: { mode?: string; message: string; requestedSchema?: unknown }, signal: AbortSignal): Promise<ElicitResult> {
    if (params.mode === "url" || params.requestedSchema === undefined) return { action: "decline" };
    const calls = [...this.pending.values()];
    const call = calls.length === 1 ? calls[0] : undefined;
    for (const pending of calls) pending.pauseTimeout();
    try {
      const answer = await this.elicit!({
        server: this.name,
        message: params.message,
        requestedSchema: params.requestedSchema as Record<string, unknown>,
        // The wait ends when the server cancels its request, or when the call it belongs to has ended.
        signal: call ? AbortSignal.any([signal, call.ended]) : signal,
        ...(call ? { tool: call.tool, toolCallId: call.toolCallId } : {}),
      });
      return answer.action === "accept" ? { action: "accept", content: answer.content } : { action: answer.action };
    } finally {
      for (const pending of this.pending.values()) pending.restartTimeout();
    }
  }

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
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} }, ...(this.oauth ? { authProvider: this.oauth } : {}) });
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
      if (needsConsent(this.oauth, error)) {
        this.authError = authRequired(this.oauth!, undefined, error);
        const url = this.oauth!.authorizationUrl?.href;
        await this.fail("auth-required", this.authError.message, url === undefined ? {} : { authorizationUrl: url });
        return [];
      }
      await this.fail("connect-failed", `cannot connect to MCP server "${this.name}": ${messageOf(error)}`);
      return [];
    }
    if (this.state !== "connecting") {
      await this.client.close().catch(ignoreError("closing an MCP client whose connect was cancelled by close"));
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

  private async fail(code: McpDiagnostic["code"], message: string, extra: Partial<McpDiagnostic> = {}): Promise<void> {
    this.state = "failed";
    this.report({ severity: "error", code, server: this.name, message: `${message}${this.stderrNote()}`, at: Date.now(), ...extra });
    await this.client.close().catch(ignoreError("closing a failed MCP client; the failure is reported"));
    await this.transport?.close().catch(ignoreError("closing a failed MCP transport; the failure is reported"));
  }

  /** Calls tool `toolName`; throws typed errors (see the module contract). */
  async call(toolName: string, args: Record<string, unknown>, context: ToolExecuteContext): Promise<ToolResult> {
    const details = { server: this.name, tool: toolName };
    if (this.authError) throw this.authError;
    if (this.state !== "connected") {
      const why = this.state === "closed" ? "has been closed" : this.state === "exited" ? "has exited" : "is not connected";
      throw new McpServerUnavailableError(`MCP server "${this.name}" ${why}, so tool "${toolName}" cannot run${this.stderrNote()}`, { details });
    }
    const timeout = this.config.callTimeoutMs ?? this.timeouts.callTimeoutMs;
    const lost = new AbortController();
    const timedOut = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const restartTimeout = () => {
      clearTimeout(timer);
      timer = setTimeout(() => timedOut.abort(new McpToolError(`MCP tool "${toolName}" on server "${this.name}" did not answer within ${timeout} ms`, { details })), timeout);
    };
    restartTimeout();
    const ended = new AbortController();
    this.pending.set(lost, { tool: toolName, toolCallId: context.toolCallId, ended: ended.signal, pauseTimeout: () => clearTimeout(timer), restartTimeout });
    let result: Awaited<ReturnType<Client["callTool"]>>;
    try {
      result = await this.client.callTool({ name: toolName, arguments: args }, undefined, {
        signal: AbortSignal.any([context.signal, lost.signal, timedOut.signal]),
        timeout: NO_SDK_TIMEOUT,
        onprogress: (progress) => {
          const total = progress.total === undefined ? "" : `/${progress.total}`;
          const note = progress.message ? `: ${progress.message}` : "";
          context.onUpdate({ content: [{ type: "text", text: `progress ${progress.progress}${total}${note}` }] });
        },
      });
    } catch (error) {
      if (context.signal.aborted) throw context.signal.reason ?? error;
      if (lost.signal.aborted) throw lost.signal.reason;
      if (timedOut.signal.aborted) throw timedOut.signal.reason;
      if (needsConsent(this.oauth, error)) throw authRequired(this.oauth!, toolName, error);
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
      clearTimeout(timer);
      this.pending.delete(lost);
      ended.abort();
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
    for (const [controller, { tool: toolName }] of this.pending) {
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
        await this.client.close().catch(ignoreError("closing an MCP client at close, best effort"));
        await this.transport?.close().catch(ignoreError("closing an MCP transport at close, best effort"));
      }
    })();
    return this.closing;
  }
}

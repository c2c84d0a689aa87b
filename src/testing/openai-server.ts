/**
 * A loopback HTTP server (127.0.0.1, ephemeral port, `url` ends in `/v1`) speaking OpenAI Chat Completions and Responses, Anthropic Messages and
 * Gemini SSE, for tests. Every request is recorded before it is answered; `respond` may answer first, else each request takes the next scripted
 * response (none left: 500). Responses can be text, tool calls, errors, fixtures, hangs, stream errors or resets; `close()` destroys open
 * connections.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ScriptedToolCall, ScriptedTurn } from "./openai-wire.ts";
import { renderChatJson, renderChatStream, renderResponsesJson, renderResponsesStream } from "./openai-wire.ts";
import { renderAnthropicStream, renderGeminiStream } from "./provider-wire.ts";
import { ignored } from "../core/ignored.ts";

export { fixtureResponse, fixtureResponses } from "./openai-fixtures.ts";

/**
 * Timing options of a streamed response.
 * @example
 * textResponse("slowly", { delayMs: 20 });
 */
export interface StreamTiming {
  /** Wait between SSE frames, in ms. Default 0. */
  delayMs?: number;
}

/**
 * One scripted answer. Build these with the helper functions.
 * @example
 * const script: ScriptedResponse[] = [textResponse("hi"), errorResponse(503)];
 */
export type ScriptedResponse =
  | { kind: "turn"; turn: ScriptedTurn; delayMs?: number }
  | { kind: "frames"; frames: string[]; status: number; headers: Record<string, string>; delayMs?: number }
  | { kind: "body"; status: number; body: string; headers: Record<string, string> }
  | { kind: "hang"; turn?: ScriptedTurn }
  | { kind: "stream-error"; turn: ScriptedTurn; error: Record<string, unknown>; delayMs?: number }
  | { kind: "reset"; turn?: ScriptedTurn };

/**
 * A request the server received.
 * @example
 * const { path, headers, body }: RecordedRequest = server.requests[0];
 */
export interface RecordedRequest {
  method: string;
  /** e.g. `/v1/chat/completions`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: any;
}

/**
 * A running loopback server.
 * @example
 * const server: OpenAIServer = await startOpenAIServer();
 */
export interface OpenAIServer {
  /** Base URL ending in `/v1`, e.g. `http://127.0.0.1:39123/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every received request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Append responses to the script; each request consumes the next one. */
  script(...responses: (ScriptedResponse | ScriptedResponse[])[]): void;
  /** Scripted responses not yet consumed. */
  remaining(): number;
  /** Resolves once `count` requests have been received (0 resolves at once). */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Options of {@link startOpenAIServer}.
 * @example
 * await startOpenAIServer({ responses: [textResponse("hi")] });
 */
export interface OpenAIServerOptions {
  /** Initial script. */
  responses?: ScriptedResponse[];
  /**
   * Answers a request before the script is consulted (e.g. a demo that reacts to
   * what it is asked). Return undefined to fall back to the next scripted response.
   */
  respond?: (request: RecordedRequest) => ScriptedResponse | undefined;
}

/**
 * Text answer, rendered in the request's wire format.
 * @example
 * server.script(textResponse("hello", { usage: { input: 12, output: 2 } }));
 */
export function textResponse(text: string, options: Omit<ScriptedTurn, "text" | "toolCalls"> & StreamTiming = {}): ScriptedResponse {
  const { delayMs, ...turn } = options;
  return { kind: "turn", turn: { ...turn, text }, ...(delayMs !== undefined ? { delayMs } : {}) };
}

/**
 * Tool calls (optionally after some text), rendered in the request's wire format; finish reason `tool_calls`.
 * @example
 * server.script(toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "a.txt" } }]));
 */
export function toolCallResponse(calls: ScriptedToolCall[], options: Omit<ScriptedTurn, "toolCalls"> & StreamTiming = {}): ScriptedResponse {
  const { delayMs, ...turn } = options;
  return { kind: "turn", turn: { ...turn, toolCalls: calls }, ...(delayMs !== undefined ? { delayMs } : {}) };
}

/**
 * Any turn: reasoning, text, tool calls, finish reason, usage.
 * @example
 * server.script(turnResponse({ reasoning: "thinking", encryptedReasoning: "enc", text: "answer" }));
 */
export function turnResponse(turn: ScriptedTurn, timing: StreamTiming = {}): ScriptedResponse {
  return { kind: "turn", turn, ...timing };
}

/**
 * An HTTP error: `body` is sent as JSON unless it is a string; e.g. `errorResponse(429, {...}, { "retry-after": "2" })`.
 * @example
 * server.script(errorResponse(429, { error: { message: "slow down" } }, { "retry-after": "2" }));
 */
export function errorResponse(status: number, body: unknown = { error: { message: `HTTP ${status}`, type: "server_error" } }, headers: Record<string, string> = {}): ScriptedResponse {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return { kind: "body", status, body: text, headers: { "content-type": typeof body === "string" ? "text/plain" : "application/json", ...headers } };
}

/**
 * Headers (and optional partial content) then nothing, forever: for abort and kill tests.
 * @example
 * server.script(hangResponse("partial text")); // then abort the client
 */
export function hangResponse(partial?: ScriptedTurn | string): ScriptedResponse {
  return { kind: "hang", ...(partial !== undefined ? { turn: typeof partial === "string" ? { text: partial } : partial } : {}) };
}

/**
 * Partial content, then a provider error event mid-stream (`{"error":{…}}` on Chat, `error` + `response.failed` on Responses).
 * @example
 * server.script(streamErrorResponse({ message: "boom", type: "server_error" }, "half an answ"));
 */
export function streamErrorResponse(
  error: { message: string; type?: string; code?: string | null } = { message: "The server had an error while processing your request.", type: "server_error" },
  partial: ScriptedTurn | string = {},
  timing: StreamTiming = {},
): ScriptedResponse {
  return { kind: "stream-error", turn: typeof partial === "string" ? { text: partial } : partial, error: { type: "server_error", code: null, param: null, ...error }, ...timing };
}

/**
 * Partial content, then the TCP connection is destroyed (a connection reset mid-stream).
 * @example
 * server.script(resetResponse("cut off"));
 */
export function resetResponse(partial?: ScriptedTurn | string): ScriptedResponse {
  return { kind: "reset", ...(partial !== undefined ? { turn: typeof partial === "string" ? { text: partial } : partial } : {}) };
}

type Endpoint = "chat" | "responses" | "anthropic" | "gemini";

const RENDERERS: Record<Endpoint, (turn: ScriptedTurn, options: { error?: Record<string, unknown>; final?: boolean }) => string[]> = {
  chat: renderChatStream,
  responses: renderResponsesStream,
  anthropic: renderAnthropicStream,
  gemini: renderGeminiStream,
};

function endpointOf(path: string): Endpoint | undefined {
  if (path === "/v1/chat/completions") return "chat";
  if (path === "/v1/responses") return "responses";
  if (path === "/v1/messages") return "anthropic";
  if (/^\/v1\/models\/[^/]+:streamGenerateContent$/.test(path)) return "gemini";
  if (/^\/v1\/models\/[^/]+:generateContent$/.test(path)) return "gemini";
  return undefined;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/**
 * Start the loopback OpenAI-wire server. See the module contract.
 * @example
 * const server = await startOpenAIServer({ responses: [errorResponse(429, { error: { message: "slow down" } }, { "retry-after": "1" })] });
 */
export async function startOpenAIServer(options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const queue: ScriptedResponse[] = [...(options.responses ?? [])];
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const text = await readBody(request);
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch (error) {
      ignored("a request body that is not JSON is kept as raw text", error);
    }
    const path = (request.url ?? "/").split("?")[0];
    const headers = Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key.toLowerCase(), Array.isArray(value) ? value.join(", ") : (value ?? "")]));
    requests.push({ method: request.method ?? "GET", path, headers, body });
    for (const waiter of waiters.filter((candidate) => requests.length >= candidate.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }

    const endpoint = endpointOf(path);
    if (request.method !== "POST" || !endpoint) {
      sendJson(response, 404, {
        error: {
          message: `arbor test server: no route for ${request.method} ${path} (serves POST /v1/chat/completions, /v1/responses, /v1/messages and /v1/models/<model>:streamGenerateContent)`,
          type: "invalid_request_error",
        },
      });
      return;
    }
    const streaming = endpoint === "gemini" ? path.endsWith(":streamGenerateContent") : body?.stream === true;
    if (!streaming && (endpoint === "anthropic" || endpoint === "gemini")) {
      sendJson(response, 501, { error: { message: `arbor test server: only the streaming form of ${path} is served`, type: "invalid_request_error" } });
      return;
    }
    const next = options.respond?.(requests[requests.length - 1]) ?? queue.shift();
    if (!next) {
      sendJson(response, 500, {
        error: { message: `arbor test server: no scripted response left for ${request.method} ${path} (request #${requests.length}); add more with server.script(...)`, type: "server_error" },
      });
      return;
    }
    const render = (turn: ScriptedTurn, renderOptions: { error?: Record<string, unknown>; final?: boolean } = {}) => RENDERERS[endpoint](turn, renderOptions);
    const writeFrames = async (frames: string[], delayMs = 0) => {
      for (const piece of frames) {
        if (response.destroyed) return;
        response.write(piece);
        if (delayMs > 0) await wait(delayMs);
      }
    };
    const sseHead = (status = 200, extra: Record<string, string> = {}) =>
      response.writeHead(status, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...extra });

    switch (next.kind) {
      case "body":
        response.writeHead(next.status, next.headers);
        response.end(next.body);
        return;
      case "frames":
        response.writeHead(next.status, next.headers);
        await writeFrames(next.frames, next.delayMs);
        response.end();
        return;
      case "turn":
        if (!streaming) {
          sendJson(response, 200, endpoint === "chat" ? renderChatJson(next.turn) : renderResponsesJson(next.turn));
          return;
        }
        sseHead();
        await writeFrames(render(next.turn), next.delayMs);
        response.end();
        return;
      case "stream-error":
        sseHead();
        await writeFrames(render(next.turn, { error: next.error }), next.delayMs);
        response.end();
        return;
      case "hang":
        sseHead();
        if (next.turn) await writeFrames(render(next.turn, { final: false }));
        return; // never ends; close() destroys it
      case "reset":
        sseHead();
        if (next.turn) await writeFrames(render(next.turn, { final: false }));
        // Let the frames reach the client before the reset.
        await new Promise<void>((resolve) => response.write("", () => resolve()));
        response.socket?.destroy();
        return;
    }
  };

  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: `arbor test server failed: ${String(error)}`, type: "server_error" } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    script(...responses) {
      for (const response of responses) queue.push(...(Array.isArray(response) ? response : [response]));
    },
    remaining: () => queue.length,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

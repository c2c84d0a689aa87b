/**
 * Node's `http` in front of a Fetch-style handler ({@link toNodeListener}: bodies streamed both ways, unbuffered SSE, the request's `signal` and the
 * body cancelled when the client leaves; runs go on) and {@link startChatServer} (default 127.0.0.1 and an ephemeral port).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ChatHandler } from "./chat-handler.ts";
import { ignoreError } from "../core/ignored.ts";

/**
 * Adapts `handler` to a Node `http` request listener.
 * @example
 * createServer(toNodeListener(handler)).listen(3000, "127.0.0.1");
 */
export function toNodeListener(handler: ChatHandler): (request: IncomingMessage, response: ServerResponse) => void {
  return (req, res) => {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const url = `http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(url, {
      method: req.method,
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
    } as RequestInit);
    void (async () => {
      const response = await handler(request);
      const outHeaders: Record<string, string | string[]> = {};
      response.headers.forEach((value, name) => {
        outHeaders[name] = value;
      });
      res.writeHead(response.status, outHeaders);
      res.flushHeaders();
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      res.on("close", () => void reader.cancel().catch(ignoreError("cancelling a response body whose client went away")));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (res.destroyed) break;
        res.write(value);
      }
      res.end();
    })().catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify({ error: { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) } }));
      } else res.destroy();
    });
  };
}

/** A running server. */
export interface ChatServer {
  /** e.g. `http://127.0.0.1:3000` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/**
 * Serves `handler` over Node `http`.
 * @example
 * const { url, close } = await startChatServer({ handler });
 */
export async function startChatServer(options: { handler: ChatHandler; port?: number; host?: string }): Promise<ChatServer> {
  const host = options.host ?? "127.0.0.1";
  const server = createServer(toNodeListener(options.handler));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

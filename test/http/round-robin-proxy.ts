/**
 * A round-robin loopback reverse proxy in front of service replicas, as a load balancer is: each
 * `/api/*` request goes to the next upstream in turn; an upstream that refuses the connection (its
 * process is gone) is skipped and the next one gets the request (a balancer's health check); an
 * upstream that dies mid-response breaks the client's response (its socket is destroyed), as a
 * real balancer does. Any other path is a file of `root` (`/` is index.html). Every forwarded
 * request is recorded with the upstream that answered it.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize } from "node:path";

/** One forwarded request and who answered it. */
export interface ProxyHit {
  method: string;
  path: string;
  upstream: string;
  status: number;
}

export interface RoundRobinProxy {
  url: string;
  hits: ProxyHit[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };

/** Starts the proxy on a free loopback port over `upstreams` (base URLs), serving the files of `root`. */
export async function startRoundRobinProxy(upstreams: readonly string[], root: string): Promise<RoundRobinProxy> {
  const hits: ProxyHit[] = [];
  let next = 0;

  const serveFile = (path: string, response: ServerResponse) => {
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (!file.startsWith(root) || !existsSync(file)) return response.writeHead(404).end("not found");
    response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  };

  const send = (request: IncomingMessage, body: Buffer, response: ServerResponse, tries: number) => {
    const upstream = upstreams[next++ % upstreams.length];
    const target = new URL(request.url!, upstream);
    const outgoing = forward(target, { method: request.method, headers: { ...request.headers, host: target.host }, agent: false }, (answer) => {
      hits.push({ method: request.method!, path: request.url!, upstream, status: answer.statusCode! });
      response.writeHead(answer.statusCode!, answer.headers);
      response.flushHeaders();
      answer.pipe(response);
      // The replica died mid-response: the client's connection breaks too.
      answer.on("aborted", () => response.destroy());
      answer.on("error", () => response.destroy());
    });
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" && tries + 1 < upstreams.length) return send(request, body, response, tries + 1);
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" }).end(`no replica answered: ${error.message}`);
      else response.destroy();
    });
    // The client went away: so does the upstream request.
    response.on("close", () => outgoing.destroy());
    outgoing.end(body);
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url!, "http://proxy").pathname;
    if (!path.startsWith("/api/")) return serveFile(path, response);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => send(request, Buffer.concat(chunks), response, 0));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

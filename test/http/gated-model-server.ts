/**
 * A loopback OpenAI Chat Completions server whose SSE frames go out only when the test lets
 * them (the frames are the project's own wire rendering, `renderChatStream`). Each request
 * takes the next scripted turn; `release(n)` lets n more frames of the current response go.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { renderChatStream, type ScriptedTurn } from "../../src/testing/openai-wire.ts";

export interface GatedModelServer {
  url: string;
  script(...turns: ScriptedTurn[]): void;
  /** The JSON body of request `index` (0-based), as sent. */
  body(index: number): string;
  /** Frames of request `index` (0-based), known once it arrived. */
  frames(index: number): string[];
  /** Resolves when `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Lets `count` more frames of request `index` go (Infinity: all). */
  release(index: number, count?: number): void;
  requestCount(): number;
  close(): Promise<void>;
}

export async function startGatedModelServer(): Promise<GatedModelServer> {
  const turns: ScriptedTurn[] = [];
  const active: { body: string; frames: string[]; allowed: number; sent: number; pump: () => void }[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const turn = turns.shift();
      if (!turn) {
        response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no scripted turn left" } }));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      response.flushHeaders();
      const state = {
        body: Buffer.concat(chunks).toString("utf8"),
        frames: renderChatStream(turn),
        allowed: 0,
        sent: 0,
        pump: () => {
          while (state.sent < Math.min(state.allowed, state.frames.length) && !response.destroyed) response.write(state.frames[state.sent++]);
          if (state.sent === state.frames.length) response.end();
        },
      };
      active.push(state);
      for (const waiter of waiters.filter((candidate) => active.length >= candidate.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  };
  const server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    script: (...more) => void turns.push(...more),
    frames: (index) => active[index].frames,
    body: (index) => active[index].body,
    requestCount: () => active.length,
    waitForRequests: (count) => (active.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
    release(index, count = Infinity) {
      const state = active[index];
      state.allowed += count;
      state.pump();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

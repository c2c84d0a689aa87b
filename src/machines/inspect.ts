/**
 * `createArborInspector`: XState inspection of the agent, run and tool actors through @statelyai/inspect's LOCAL WebSocket server (default
 * 127.0.0.1:8080, never the hosted relay; the served page iframes stately.ai). A busy port rejects `ready` with `InvalidArgumentError`. Content
 * (text, thinking, arguments, image data, summaries) is redacted by default; `redact: false` sends it as is.
 */
import { Server } from "node:http";
import { createWebSocketInspector } from "@statelyai/inspect";
import { createInspectorServer } from "@statelyai/inspect/server";
import { InvalidArgumentError } from "../core/errors.ts";
import { ignoreError } from "../core/ignored.ts";

/**
 * Runs `create` (which calls `http.Server#listen(port, callback)` once, synchronously) with that call given `host`, then restores `listen`. Nothing
 * else runs in between (ours; see the module contract). `listening` settles when that server listens, or rejects with its listen error (a busy port),
 * which then never reaches the upstream server's unhandled `error` event.
 */
function listeningOn<T>(host: string, create: () => T): { created: T; listening: Promise<void> } {
  const original = Server.prototype.listen;
  let settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const listening = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  Server.prototype.listen = function listen(this: Server, ...args: unknown[]) {
    if (typeof args[0] === "number" && typeof args[1] !== "string") args.splice(1, 0, host);
    const emit = this.emit;
    let started = false;
    this.once("listening", () => {
      started = true;
      settle?.resolve();
    });
    // Before it listens, an error is the listen's own (EADDRINUSE, EACCES): report it, do not emit it.
    this.emit = function (this: Server, event: string | symbol, ...rest: unknown[]) {
      if (event === "error" && !started) {
        settle?.reject(rest[0] as Error);
        return true;
      }
      return (emit as (this: Server, ...all: unknown[]) => boolean).call(this, event, ...rest);
    } as Server["emit"];
    return (original as (...all: unknown[]) => Server).apply(this, args);
  } as typeof original;
  try {
    return { created: create(), listening };
  } finally {
    Server.prototype.listen = original;
  }
}

/**
 * Options of {@link createArborInspector}.
 * @example
 * createArborInspector({ port: 8099, redact: true, autoOpen: false });
 */
export interface ArborInspectorOptions {
  /** Port of the local inspector server (default 8080). */
  port?: number;
  /** Interface the server listens on (default `"127.0.0.1"`, loopback only; `"0.0.0.0"` for every interface). */
  host?: string;
  /** Start the local server (default true). */
  startServer?: boolean;
  /** Open a browser on the server's page (default false). */
  autoOpen?: boolean;
  /** Redact message and tool-argument content (default true). */
  redact?: boolean;
}

/**
 * A running inspector: pass `inspect` to `createAgent({ inspect })`.
 * @example
 * const { inspect, url, stop } = createArborInspector();
 */
export interface ArborInspector {
  /** The XState inspection observer. */
  readonly inspect: unknown;
  /** The WebSocket URL clients connect to. */
  readonly url: string;
  /** Resolves once the local server listens; rejects with `InvalidArgumentError` when it cannot (a busy port). */
  readonly ready: Promise<void>;
  /** Stops the inspector and the local server. */
  stop(): void;
}

const REDACTED_KEYS = new Set(["text", "thinking", "arguments", "args", "delta", "data", "summary", "partialJson", "thinkingSignature", "textSignature"]);
const MAX_DEPTH = 12;

function redactedOf(value: unknown): string {
  const size = typeof value === "string" ? value.length : JSON.stringify(value ?? null)?.length ?? 0;
  return `[redacted ${size} chars]`;
}

/**
 * Replaces content-bearing fields (see the module contract) with a size note.
 * Pure: returns a new value; never throws (cycles and deep values are cut).
 * @example
 * redactContent({ role: "user", content: "secret" }); // { role: "user", content: "[redacted 6 chars]" }
 */
export function redactContent(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH || seen.has(value)) return "[cut]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redactContent(item, depth + 1, seen));
  if (typeof (value as { getSnapshot?: unknown }).getSnapshot === "function") return { actorRef: (value as { id?: string }).id };
  if (value instanceof AbortSignal) return "[AbortSignal]";
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === "function") continue;
    if (REDACTED_KEYS.has(key) && field !== undefined) result[key] = redactedOf(field);
    else if (key === "content" && typeof field === "string") result[key] = redactedOf(field);
    else result[key] = redactContent(field, depth + 1, seen);
  }
  return result;
}

/**
 * Starts the local inspector (see the module contract).
 * @example
 * const { inspect, stop } = createArborInspector({ port: 8099, redact: true });
 */
export function createArborInspector(options: ArborInspectorOptions = {}): ArborInspector {
  const port = options.port ?? 8080;
  const host = options.host ?? "127.0.0.1";
  const started = options.startServer === false ? undefined : listeningOn(host, () => createInspectorServer({ port, autoOpen: options.autoOpen ?? false }));
  const server = started?.created;
  const ready = (started?.listening ?? Promise.resolve()).catch((error: unknown) => {
    throw new InvalidArgumentError(`The inspector could not listen on ${host}:${port}: ${(error as Error).message}. Choose another port.`, { cause: error, details: { host, port } });
  });
  ready.catch(ignoreError("a failed listen is thrown by the inspector's ready"));
  const connectHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const url = `ws://${connectHost}:${port}`;
  const redact = options.redact !== false;
  const inspector = createWebSocketInspector({
    url,
    // `serialize` sees the whole record (event, context, and the input/output of every
    // actor snapshot), where sanitizeEvent/sanitizeContext would miss inputs and outputs.
    ...(redact ? { serialize: (record) => redactContent(record) as typeof record } : {}),
  });
  return {
    inspect: inspector.inspect,
    url,
    ready,
    stop() {
      inspector.stop();
      server?.stop();
    },
  };
}

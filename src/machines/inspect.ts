/**
 * `createArborInspector`: XState inspection of the agent, run and tool actors through
 * @statelyai/inspect's LOCAL WebSocket inspector server (never the hosted Sky relay).
 *
 * Contract (ours):
 * - starts `createInspectorServer` from `@statelyai/inspect/server` on `host`:`port`
 *   (default `127.0.0.1`:8080, loopback only; `autoOpen` default false: no browser is
 *   launched) and connects `createWebSocketInspector` to it; pass `startServer: false`
 *   to connect to a server you run yourself;
 * - the upstream server takes no host option and would listen on every interface; the
 *   host is applied to its one `listen` call (made synchronously while it is created). A
 *   wider `host` (`0.0.0.0`) exposes the records to the network: keep redaction on;
 * - the page it serves is a bridge that iframes the hosted Stately UI
 *   (`https://stately.ai/inspect`), so viewing needs internet access; the records themselves
 *   go from this process to the local server and the browser only;
 * - by default every event and snapshot context is redacted before it leaves the
 *   process: message text, thinking, tool-call arguments, tool arguments, deltas, image
 *   data and summaries become `"[redacted N chars]"`; shapes, ids, roles, tool names,
 *   stop reasons and usage stay visible; `redact: false` sends content as is;
 * - the server relays actor (`@xstate.actor`), event (`@xstate.event`) and snapshot
 *   (`@xstate.snapshot`) records as JSON over WebSocket, buffering the last 200 for
 *   late clients (upstream behaviour).
 *
 * @example
 * ```ts
 * const inspector = createArborInspector({ port: 8099 });
 * const agent = createAgent({ session, model, inspect: inspector.inspect });
 * // open http://localhost:8099 for the Stately inspector; later:
 * inspector.stop();
 * ```
 */
import { Server } from "node:http";
import { createWebSocketInspector } from "@statelyai/inspect";
import { createInspectorServer } from "@statelyai/inspect/server";

/**
 * Runs `create` (which calls `http.Server#listen(port, callback)` once, synchronously) with
 * that call given `host`, then restores `listen`. Nothing else runs in between (ours; see the
 * module contract).
 */
function listeningOn<T>(host: string, create: () => T): T {
  const original = Server.prototype.listen;
  Server.prototype.listen = function listen(this: Server, ...args: unknown[]) {
    if (typeof args[0] === "number" && typeof args[1] !== "string") args.splice(1, 0, host);
    return (original as (...all: unknown[]) => Server).apply(this, args);
  } as typeof original;
  try {
    return create();
  } finally {
    Server.prototype.listen = original;
  }
}

/**
 * Options of {@link createArborInspector}.
 *
 * @example
 * ```ts
 * createArborInspector({ port: 8099, redact: true, autoOpen: false });
 * ```
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
 *
 * @example
 * ```ts
 * const { inspect, url, stop } = createArborInspector();
 * ```
 */
export interface ArborInspector {
  /** The XState inspection observer. */
  readonly inspect: unknown;
  /** The WebSocket URL clients connect to. */
  readonly url: string;
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
 *
 * @example
 * ```ts
 * redactContent({ role: "user", content: "secret" }); // { role: "user", content: "[redacted 6 chars]" }
 * ```
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
 *
 * @example
 * ```ts
 * const { inspect, stop } = createArborInspector({ port: 8099, redact: true });
 * ```
 */
export function createArborInspector(options: ArborInspectorOptions = {}): ArborInspector {
  const port = options.port ?? 8080;
  const host = options.host ?? "127.0.0.1";
  const server = options.startServer === false ? undefined : listeningOn(host, () => createInspectorServer({ port, autoOpen: options.autoOpen ?? false }));
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
    stop() {
      inspector.stop();
      server?.stop();
    },
  };
}

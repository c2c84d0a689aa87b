/**
 * Test harness of the HTTP service: a real harness on a SQLite file, the real handler on a
 * loopback port, and the `ai` package's own client (`DefaultChatTransport`, `readUIMessageStream`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from "ai";
import { z } from "zod";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { defineTool } from "../../src/core/tools.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler, type ChatHandler, type ChatHandlerOptions } from "../../src/http/chat-handler.ts";
import { startChatServer, type ChatServer } from "../../src/http/node-adapter.ts";
import { createMachineStates, type MachineStates } from "../../src/machines/machine-states.ts";
import { foldChunks } from "../../src/http/ui-messages.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import type { SessionRepository } from "../../src/store/session-types.ts";

export const TOKEN = "test-token-7f3a";

export interface Service {
  url: string;
  harness: AgentHarness;
  log: EventLog;
  server: ChatServer;
  /** The live machine states recorder the harness and the handler share (as `arbor serve`). */
  machines: MachineStates;
  transport(token?: string): DefaultChatTransport<UIMessage>;
  close(): Promise<void>;
}

export async function startService(options: { modelUrl: string; token?: string | null; toolGate?: (path: string) => Promise<void>; wrap?: (handler: ChatHandler) => ChatHandler; requireApproval?: string[]; api?: "chat" | "responses"; handler?: Pick<ChatHandlerOptions, "idleSessionMs" | "onSessionClosed" | "maxBodyBytes" | "budget"> }): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), "arbor-http-"));
  const machines = createMachineStates();
  const harness = await createHarness({
    inspect: machines,
    eventLogPath: join(dir, "arbor.db"),
    cwd: dir,
    ...(options.requireApproval ? { requireApproval: options.requireApproval } : {}),
    models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: options.modelUrl, apiKey: "test", api: options.api ?? "chat" }) } },
    streamOptions: { maxRetries: 0 },
    tools: [
      defineTool({
        name: "read",
        description: "Read a file",
        parameters: z.object({ path: z.string() }),
        execute: async ({ path }) => {
          await options.toolGate?.(path);
          return { content: [{ type: "text", text: `contents of ${path}` }] };
        },
      }),
    ],
  });
  const token = options.token === null ? undefined : (options.token ?? TOKEN);
  const handler = createChatHandler({ harness, token, cwd: dir, machineStates: machines, ...options.handler });
  const server = await startChatServer({ handler: options.wrap ? options.wrap(handler) : handler });
  const log = (harness.repository as SessionRepository).log;
  return {
    url: server.url,
    harness,
    log,
    server,
    machines,
    transport: (bearer = TOKEN) => new DefaultChatTransport<UIMessage>({ api: `${server.url}/api/chat`, headers: { authorization: `Bearer ${bearer}` } }),
    async close() {
      await server.close();
      await harness.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A tool gate for `startService`: every call of the read tool on `path` (any path when omitted)
 * waits until `release()`; `inTool` resolves once a call is waiting there.
 */
export function heldToolGate(path?: string): { toolGate: (path: string) => Promise<void>; inTool: Promise<void>; release: () => void } {
  let entered!: () => void;
  const inTool = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    inTool,
    release,
    toolGate: async (called) => {
      if (path !== undefined && called !== path) return;
      entered();
      await gate;
    },
  };
}

export const userMessage = (text: string, id = `u-${text.length}`): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

/** Reads every chunk of a UI message stream. */
export async function readChunks(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

/** The message the AI SDK builds from `chunks` (its own `readUIMessageStream`). */
export const messageOf = foldChunks;

/** Every event of a session's stream. */
export const sessionEvents = (log: EventLog, id: string): Promise<StoredEvent[]> => log.readStream(`session-${id}`);

/** Resolves when the session's stream holds an event matching `predicate` (checked on every commit). */
export function waitForEvent(log: EventLog, id: string, predicate: (event: StoredEvent, all: StoredEvent[]) => boolean): Promise<StoredEvent> {
  return new Promise((resolve, reject) => {
    const seen: StoredEvent[] = [];
    const subscription = log.subscribe({ streamId: `session-${id}` }).subscribe({
      next: (event) => {
        seen.push(event);
        if (predicate(event, seen)) {
          queueMicrotask(() => subscription.unsubscribe());
          resolve(event);
        }
      },
      error: reject,
    });
  });
}

/**
 * Test fleet of the HTTP service: two (or more) real `arbor serve` child processes on ONE log
 * (a PostgreSQL schema of the test's own, or one SQLite file), the loopback gated model server
 * behind all of them, and the test's own connection to that log to watch what they write.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { UIMessageChunk } from "ai";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import type { EventLog, StoredEvent } from "../../src/store/event-log.ts";
import { serveArbor, tempDir } from "../cli/cli-helpers.ts";
import { PG_URL } from "../store/pg-test-db.ts";

export const REPLICA_TOKEN = "replica-token-5c1d";

/** Where the replicas keep their log. */
export type Backend = { kind: "pg"; schema: string } | { kind: "sqlite" };

export interface Replica {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote on stderr so far. */
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export interface Fleet {
  replicas: Replica[];
  /** The test's own connection to the replicas' log. */
  log: EventLog;
  dir: string;
  close(): Promise<void>;
}

/** Starts `count` `arbor serve` processes on one log, all with the model at `modelUrl`. */
export async function startFleet(backend: Backend, modelUrl: string, count = 2, extraEnv: NodeJS.ProcessEnv = {}, extraFlags: readonly string[] = []): Promise<Fleet> {
  const dir = tempDir("arbor-replicas-");
  const db = backend.kind === "pg" ? PG_URL : join(dir, "arbor.db");
  const env = { OPENAI_API_KEY: "sk-test", ARBOR_TOKEN: REPLICA_TOKEN, ...(backend.kind === "pg" ? { ARBOR_DB_SCHEMA: backend.schema } : {}), ...extraEnv };
  const flags = ["--db", db, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", modelUrl, "--port", "0", ...extraFlags];
  const replicas: Replica[] = [];
  const start = async () => {
    const started = serveArbor(flags, env);
    let seen = "";
    started.child().stderr!.on("data", (chunk: Buffer) => (seen += chunk.toString("utf8")));
    const url = await started.ready;
    replicas.push({ url, child: started.child(), stderr: () => seen, exited: started.exited });
  };
  // One at a time: the first creates the schema (or the file).
  for (let index = 0; index < count; index++) await start();
  const log = backend.kind === "pg" ? createPostgresEventLog({ connectionString: PG_URL, schema: backend.schema }) : createSqliteEventLog({ path: db });
  return {
    replicas,
    log,
    dir,
    async close() {
      for (const replica of replicas) {
        if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill("SIGKILL");
        await replica.exited;
      }
      await log.close();
    },
  };
}

/** `POST {url}/api/chat` with a user prompt for session `id`. */
export function postPrompt(url: string, id: string, text: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/api/chat`, {
    method: "POST",
    ...(signal ? { signal } : {}),
    headers: { authorization: `Bearer ${REPLICA_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ id, trigger: "submit-message", messages: [{ id: `u-${text.length}`, role: "user", parts: [{ type: "text", text }] }] }),
  });
}

/** An authorized request to the replica. */
export function call(url: string, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${REPLICA_TOKEN}`, ...(init.headers ?? {}) } });
}

/** The UI message chunks of an SSE response body, until it ends. */
export async function sseChunks(response: Response): Promise<UIMessageChunk[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((frame) => frame.trim())
    .filter((frame) => frame.startsWith("data: ") && frame !== "data: [DONE]")
    .map((frame) => JSON.parse(frame.slice("data: ".length)) as UIMessageChunk);
}

/** The `run.ended` statuses of a session. */
export async function runEndings(log: EventLog, id: string): Promise<string[]> {
  return (await log.readStream(`session-${id}`)).filter((event) => event.type === "run.ended").map((event) => (event.data as { status: string }).status);
}

/** Resolves when the session's stream holds an event matching `predicate`. */
export function waitForSessionEvent(log: EventLog, id: string, predicate: (event: StoredEvent) => boolean): Promise<StoredEvent> {
  return new Promise((resolve, reject) => {
    const subscription = log.subscribe({ streamId: `session-${id}` }).subscribe({
      next: (event) => {
        if (!predicate(event)) return;
        queueMicrotask(() => subscription.unsubscribe());
        resolve(event);
      },
      error: reject,
    });
  });
}

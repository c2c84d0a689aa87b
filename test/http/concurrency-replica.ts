/**
 * One replica of the HTTP service for the per-tenant concurrency test: a harness on the shared
 * PostgreSQL schema, run slots in PostgreSQL, the loopback model at argv[3]. Prints its URL.
 * Usage: concurrency-replica.ts <pg url> <schema> <model url> <maxConcurrentRuns>
 */
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { createChatHandler } from "../../src/http/chat-handler.ts";
import { startChatServer } from "../../src/http/node-adapter.ts";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createPostgresRunSlotStore } from "../../src/store/postgres/pg-run-slots.ts";

const [pgUrl, schema, modelUrl, max] = process.argv.slice(2);
const eventLog = createPostgresEventLog({ connectionString: pgUrl, schema });
const harness = await createHarness({
  eventLog,
  models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: modelUrl, apiKey: "test", api: "chat" }) } },
  streamOptions: { maxRetries: 0 },
});
const tokens: Record<string, string> = { "token-a": "a", "token-b": "b" };
const handler = createChatHandler({
  harness,
  authenticate: (request) => tokens[(request.headers.get("authorization") ?? "").replace(/^Bearer /, "")],
  concurrency: { maxConcurrentRuns: Number(max), retryAfterSeconds: 3, store: createPostgresRunSlotStore({ connectionString: pgUrl }) },
});
const server = await startChatServer({ handler });
process.stdout.write(`${server.url}\n`);

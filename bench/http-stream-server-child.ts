/**
 * The server process of the http-stream bench (P10): serves one chat endpoint on a loopback
 * port, either Arbor's `createChatHandler` (a harness on a SQLite file on disk, default
 * settings) or the AI SDK's own `streamText(...).toUIMessageStreamResponse()` (persists
 * nothing), both through the same Node `http` adapter and the same OpenAI-wire model server.
 * Usage: forked with `{ mode: "arbor" | "ai-sdk", modelUrl, dir }`; sends `{ url }` once
 * listening, answers every `"cpu"` message with `process.cpuUsage()` and exits on `"close"`.
 */
import { join } from "node:path";
import { createOpenAI } from "@ai-sdk/openai";
import { convertToModelMessages, streamText, type UIMessage } from "ai";
import { createOpenAIModel } from "../src/adapters/model/openai.ts";
import { createHarness } from "../src/harness/create-harness.ts";
import { createChatHandler } from "../src/http/chat-handler.ts";
import { startChatServer } from "../src/http/node-adapter.ts";

const config = JSON.parse(process.argv[2]) as { mode: "arbor" | "ai-sdk"; modelUrl: string; dir: string };

async function arborHandler(): Promise<{ handler: (request: Request) => Promise<Response>; close(): Promise<void> }> {
  const harness = await createHarness({
    eventLogPath: join(config.dir, "arbor.db"),
    cwd: config.dir,
    models: { main: { model: createOpenAIModel({ modelId: "gpt-test", baseURL: config.modelUrl, apiKey: "test", api: "chat" }) } },
  });
  return { handler: createChatHandler({ harness, cwd: config.dir }), close: () => harness.close() };
}

function aiSdkHandler(): { handler: (request: Request) => Promise<Response>; close(): Promise<void> } {
  const model = createOpenAI({ baseURL: config.modelUrl, apiKey: "test" }).chat("gpt-test");
  return {
    async handler(request) {
      const { messages } = (await request.json()) as { messages: UIMessage[] };
      return streamText({ model, messages: await convertToModelMessages(messages) }).toUIMessageStreamResponse();
    },
    close: async () => undefined,
  };
}

const served = config.mode === "arbor" ? await arborHandler() : aiSdkHandler();
const server = await startChatServer({ handler: served.handler });
process.on("message", (message) => {
  if (message === "cpu") process.send?.({ cpu: process.cpuUsage() });
  else if (message === "close") void server.close().then(() => served.close()).then(() => process.exit(0));
});
process.send?.({ url: server.url });

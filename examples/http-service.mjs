// A Node HTTP service that runs a prompt per request and streams the run's events to the client as
// server-sent events (one `data:` line per logged event), straight from `harness.events$`.
// `node http-service.mjs` listens on 127.0.0.1:8787 (needs OPENAI_API_KEY); with
// ARBOR_EXAMPLE_SELF_TEST=1 it answers one request of its own against the loopback test server.
import { createServer } from "node:http";
import { createHarness, createMemoryEventLog, createOpenAIModel } from "arbor-agent";
import { startOpenAIServer, textResponse } from "arbor-agent/testing";

const selfTest = process.env.ARBOR_EXAMPLE_SELF_TEST === "1";
const model = selfTest ? await startOpenAIServer({ responses: [textResponse("Hello from the service.")] }) : undefined;
const harness = await createHarness({
  eventLog: createMemoryEventLog(),
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", api: "chat", ...(model ? { baseURL: model.url, apiKey: "test" } : {}) }) },
});

const server = createServer(async (request, response) => {
  if (request.method !== "POST" || request.url !== "/prompt") {
    response.writeHead(404).end();
    return;
  }
  let body = "";
  for await (const chunk of request) body += chunk;
  const { prompt } = JSON.parse(body || "{}");
  if (typeof prompt !== "string" || prompt.trim() === "") {
    response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "body must be {\"prompt\": string}" }));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const subscription = harness.events$.subscribe((event) => response.write(`data: ${JSON.stringify({ type: event.type, position: event.globalPosition, data: event.data })}\n\n`));
  const outcome = await harness.prompt(prompt);
  subscription.unsubscribe();
  response.end(`event: end\ndata: ${JSON.stringify({ status: outcome.status })}\n\n`);
});
await new Promise((resolve) => server.listen(selfTest ? 0 : 8787, "127.0.0.1", resolve));
const { port } = server.address();
console.log(`listening on http://127.0.0.1:${port}/prompt`);

if (selfTest) {
  const reply = await fetch(`http://127.0.0.1:${port}/prompt`, { method: "POST", body: JSON.stringify({ prompt: "hi" }) });
  const text = await reply.text();
  const types = [...text.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]).type ?? JSON.parse(match[1]).status);
  console.log(`streamed: ${types.join(" ")}`);
  server.close();
  await harness.close();
  await model.close();
  if (!types.includes("message.delta") || !text.includes('"status":"done"')) process.exit(1);
  console.log("example ok");
}

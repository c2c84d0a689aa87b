// A typed agent: zod input and output, a tool, and structured output with a repair round. The
// model answers in OpenAI's structured-output mode (Chat Completions `response_format`
// json_schema); an answer that fails the schema goes back to the model with the failing fields.
// `node typed-agent.mjs` needs OPENAI_API_KEY (for a local server, also OPENAI_BASE_URL); with
// ARBOR_EXAMPLE_SELF_TEST=1 it runs against Arbor's loopback test server, whose scripted model
// gets the schema wrong once.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, createOpenAIModel, defineTool } from "arbor-agent";
import { defineAgent } from "arbor-agent/agent";
import { startOpenAIServer, textResponse, toolCallResponse } from "arbor-agent/testing";
import { z } from "zod";

const selfTest = process.env.ARBOR_EXAMPLE_SELF_TEST === "1";
const root = mkdtempSync(join(tmpdir(), "arbor-example-"));
const server = selfTest
  ? await startOpenAIServer({
      responses: [
        toolCallResponse([{ id: "call_1", name: "search_issues", arguments: { query: "crash on start" } }]),
        textResponse(JSON.stringify({ label: "bug", priority: "high", duplicateOf: null })), // priority must be a number
        textResponse(JSON.stringify({ label: "bug", priority: 1, duplicateOf: 41 })),
      ],
    })
  : undefined;

const searchIssues = defineTool({
  name: "search_issues",
  description: "Search earlier issues by text; returns matching issue numbers and titles",
  parameters: z.object({ query: z.string() }),
  execute: async ({ query }) => ({ content: [{ type: "text", text: `#41 App crashes on start (matches "${query}")` }] }),
});

const triage = defineAgent({
  name: "triage",
  instructions: "You triage GitHub issues. Search for duplicates first, then label the issue.",
  input: z.object({ title: z.string().min(1), body: z.string() }),
  output: z.object({
    label: z.enum(["bug", "feature", "question"]),
    priority: z.number().int().min(1).max(3),
    duplicateOf: z.number().int().nullable(),
  }),
  tools: [searchIssues],
  maxRepairs: 2,
});

const harness = await createHarness({
  eventLogPath: join(root, ".arbor", "arbor.db"),
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", api: "chat", ...(server ? { baseURL: server.url, apiKey: "test" } : {}) }) },
});
const outcome = await triage.run({ title: "Crash on start", body: "The app exits at once since 2.3." }, { harness });
const requestFormat = server?.requests[0]?.body.response_format?.type;
await harness.close();
await server?.close();

if (outcome.status === "done") {
  // outcome.output is typed: { label: "bug" | "feature" | "question"; priority: number; duplicateOf: number | null }
  console.log(`triage: ${outcome.output.label}, priority ${outcome.output.priority}, duplicate of ${outcome.output.duplicateOf ?? "none"} (${outcome.repairs} repair(s), ${outcome.usage.totalTokens} tokens, session ${outcome.sessionId})`);
} else {
  console.log(`triage ${outcome.status}: ${outcome.error.code}: ${outcome.error.message}`);
}
if (selfTest) {
  if (outcome.status !== "done" || outcome.repairs !== 1 || outcome.output.duplicateOf !== 41 || requestFormat !== "json_schema") process.exit(1);
  console.log("example ok");
}

// The README's harness: a coding agent with pi's tools confined to a folder, a custom tool and a
// blocking hook, on a SQLite log. `node harness.mjs` needs OPENAI_API_KEY (for a local server, also
// OPENAI_BASE_URL; most accept any key); with ARBOR_EXAMPLE_SELF_TEST=1 it runs against Arbor's loopback test server.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCodingTools, createExecutionEnv, createHarness, createOpenAIModel, defineTool } from "arbor-agent";
import { startOpenAIServer, textResponse, toolCallResponse } from "arbor-agent/testing";
import { z } from "zod";

const selfTest = process.env.ARBOR_EXAMPLE_SELF_TEST === "1";
const root = mkdtempSync(join(tmpdir(), "arbor-example-"));
writeFileSync(join(root, "notes.txt"), "TODO: write the README\n");
const server = selfTest
  ? await startOpenAIServer({
      responses: [
        toolCallResponse([{ id: "call_1", name: "read", arguments: { path: "notes.txt" } }]),
        toolCallResponse([{ id: "call_2", name: "bash", arguments: { command: "rm -rf /" } }]),
        textResponse("One TODO: write the README."),
      ],
    })
  : undefined;

const harness = await createHarness({
  eventLogPath: join(root, ".arbor", "arbor.db"),
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", api: "chat", ...(server ? { baseURL: server.url, apiKey: "test" } : {}) }) },
  tools: [
    ...createCodingTools(createExecutionEnv({ root })),
    defineTool({
      name: "now",
      description: "Current time",
      parameters: z.object({}),
      execute: async () => ({ content: [{ type: "text", text: new Date().toISOString() }] }),
    }),
  ],
  hooks: {
    toolCall: ({ toolName, input }) =>
      toolName === "bash" && String(input.command).includes("rm -rf") ? { block: true, reason: "not here" } : undefined,
  },
});
const toolOutcomes = [];
harness.events$.subscribe((event) => {
  if (event.type === "tool.ended") toolOutcomes.push(`${event.data.toolName}:${event.data.outcome}`);
});
const outcome = await harness.prompt("list the TODOs in this folder");
await harness.close();
await server?.close();
console.log(`run ${outcome.status}${outcome.error ? ` (${outcome.error})` : ""}; tools: ${toolOutcomes.join(", ") || "none"}`);
if (outcome.status !== "done") process.exitCode = 1;
if (selfTest) {
  if (outcome.status !== "done" || !toolOutcomes.includes("read:succeeded") || !toolOutcomes.includes("bash:blocked")) process.exit(1);
  console.log("example ok");
}

// Durable tool approval (docs/approval.md): a `deploy` tool needs a human decision. The first
// harness runs until the call waits for approval and closes (as a process that exits would); a
// second harness, opened later on the same SQLite log, sees the waiting call, approves it and
// continues: `deploy` runs exactly once. The audit stream (no content) is printed at the end.
// `node approval.mjs` needs OPENAI_API_KEY (for a local server, also OPENAI_BASE_URL); with
// ARBOR_EXAMPLE_SELF_TEST=1 it runs against Arbor's loopback test server.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHarness, createOpenAIModel, defineTool } from "arbor-agent";
import { startOpenAIServer, textResponse, toolCallResponse } from "arbor-agent/testing";
import { z } from "zod";

const selfTest = process.env.ARBOR_EXAMPLE_SELF_TEST === "1";
const root = mkdtempSync(join(tmpdir(), "arbor-approval-"));
const eventLogPath = join(root, ".arbor", "arbor.db");
const server = selfTest
  ? await startOpenAIServer({
      responses: [
        toolCallResponse([
          { id: "call_deploy", name: "deploy", arguments: { service: "web", version: "1.4.2" } },
          { id: "call_now", name: "now", arguments: {} },
        ]),
        textResponse("Deployed web 1.4.2."),
      ],
    })
  : undefined;

const deployments = [];
const tools = [
  defineTool({
    name: "deploy",
    description: "Deploy a version of a service",
    parameters: z.object({ service: z.string(), version: z.string() }),
    // Every deploy needs a human decision; a function of the arguments works too.
    needsApproval: true,
    execute: async ({ service, version }) => {
      deployments.push(`${service}@${version}`);
      return { content: [{ type: "text", text: `deployed ${service} ${version}` }] };
    },
  }),
  defineTool({
    name: "now",
    description: "Current time",
    parameters: z.object({}),
    execute: async () => ({ content: [{ type: "text", text: new Date().toISOString() }] }),
  }),
];
const options = {
  eventLogPath,
  models: { main: createOpenAIModel({ modelId: "gpt-4o-mini", api: "chat", ...(server ? { baseURL: server.url, apiKey: "test" } : {}) }) },
  tools,
};

// Process A: runs until the deploy call waits, then exits.
const first = await createHarness(options);
const asked = await first.prompt("deploy web 1.4.2 and tell me the time");
console.log(`first run: ${asked.status}; waiting: ${(asked.pendingApprovals ?? []).join(", ")}`);
const sessionId = first.id;
await first.close();

// Later, process B: the log says what waits; approve it and go on.
const later = await createHarness({ ...options, sessionId });
console.log(`reopened: ${later.getState().operation}`);
for (const call of await later.pendingApprovals()) {
  console.log(`approving ${call.toolName} ${JSON.stringify(call.input)} (${call.toolCallId})`);
  await later.approve(call.toolCallId, { reason: "release window" });
}
const done = await later.continue();
const audit = [];
later.auditEvents$.subscribe((event) => audit.push(event.type === "tool.ended" ? `${event.type}:${event.toolName}:${event.outcome}` : event.type));
await later.close();
await server?.close();
console.log(`second run: ${done.status}; deployments: ${deployments.join(", ")}`);
console.log(`audit: ${audit.join(" ")}`);
if (selfTest) {
  const ok =
    asked.status === "suspended" &&
    done.status === "done" &&
    deployments.length === 1 &&
    audit.includes("approval.requested") &&
    audit.includes("approval.ended") &&
    audit.includes("tool.ended:deploy:succeeded");
  if (!ok) process.exit(1);
  console.log("example ok");
}

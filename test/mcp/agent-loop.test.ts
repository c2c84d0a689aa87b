/**
 * MCP tools through the full agent loop: createAgent over a real SQLite session,
 * the real @ai-sdk/openai client talking to the loopback OpenAI-wire server, and
 * server-everything over stdio.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpServers, type McpConnection } from "../../src/adapters/mcp/index.ts";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import type { ToolResultMessage } from "../../src/core/messages.ts";
import { createAgent } from "../../src/machines/agent.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { createSqliteEventLog } from "../../src/store/sqlite/sqlite-event-log.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { everythingStdio } from "./helpers.ts";

describe("MCP tools in the agent loop", () => {
  let mcp: McpConnection;
  let server: OpenAIServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "arbor-mcp-loop-"));
    [mcp, server] = await Promise.all([connectMcpServers([everythingStdio()]), startOpenAIServer()]);
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a tool call and an error result from the server, and sends both back to the model", async () => {
    const log = createSqliteEventLog({ path: join(dir, "arbor.db") });
    try {
      const session = await createSessionRepository({ log }).create({ cwd: dir });
      server.script(
        toolCallResponse([
          { id: "call_sum", name: "everything__get-sum", arguments: { a: 2, b: 3 } },
          { id: "call_bad", name: "everything__get-resource-reference", arguments: { resourceId: 0 } },
          { id: "call_invalid", name: "everything__get-sum", arguments: { a: "two" } },
        ]),
        textResponse("2 + 3 = 5"),
      );
      const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
      const agent = createAgent({ session, model, tools: mcp.tools });
      const outcome = await agent.prompt("Add 2 and 3 with the MCP tool.");
      expect(outcome.status).toBe("done");
      expect(outcome.lastAssistant?.content).toEqual([{ type: "text", text: "2 + 3 = 5" }]);

      const results = session.view.buildContext().messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
      const byId = Object.fromEntries(results.map((result) => [result.toolCallId, result]));
      expect(byId.call_sum).toMatchObject({ toolName: "everything__get-sum", isError: false, content: [{ type: "text", text: "The sum of 2 and 3 is 5." }] });
      expect(byId.call_bad.isError).toBe(true);
      expect(byId.call_bad.content).toEqual([
        { type: "text", text: expect.stringContaining("Invalid resourceId: 0. Must be a finite positive integer.") },
      ]);
      expect(byId.call_invalid.isError).toBe(true);
      expect(JSON.stringify(byId.call_invalid.content)).toContain("a: must be number");

      // The model saw the MCP tool's schema, and got the results back.
      const firstBody = server.requests[0].body as { tools: { function: { name: string; parameters: unknown } }[] };
      const sumTool = firstBody.tools.find((tool) => tool.function.name === "everything__get-sum");
      expect(sumTool?.function.parameters).toMatchObject({ type: "object", required: ["a", "b"] });
      const secondBody = JSON.stringify(server.requests[1].body);
      expect(secondBody).toContain("The sum of 2 and 3 is 5.");
      expect(secondBody).toContain("Invalid resourceId: 0");
    } finally {
      await log.close();
    }
  });
});

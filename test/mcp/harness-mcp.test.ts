/**
 * MCP servers configured on the harness: their tools reach the model through the
 * loop, and `close()` stops the server processes (servers are closed with the session).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIModel } from "../../src/adapters/model/openai.ts";
import { HarnessConfigError } from "../../src/core/errors.ts";
import { createHarness } from "../../src/harness/create-harness.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { everythingStdio } from "./helpers.ts";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("harness mcpServers", { timeout: 120_000 }, () => {
  it("offers the servers' tools to the model, runs them, and closes the servers with the harness", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-harness-mcp-"));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    const harness = await createHarness({ eventLogPath: join(dir, "arbor.db"), cwd: dir, models: { main: model }, mcpServers: [everythingStdio()] });
    const pid = harness.mcp!.servers[0].pid!;
    expect(alive(pid)).toBe(true);
    server.script(toolCallResponse([{ id: "call_echo", name: "everything__echo", arguments: { message: "ping" } }]), textResponse("echoed"));
    const outcome = await harness.prompt("echo ping");
    expect(outcome.status).toBe("done");
    const offered = (server.requests[0].body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(offered).toContain("everything__echo");
    expect(JSON.stringify(server.requests[1].body.messages)).toContain("ping");
    await harness.close();
    for (let attempt = 0; attempt < 100 && alive(pid); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(pid)).toBe(false);
  });

  it("refuses a bad server configuration with HarnessConfigError naming mcpServers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "arbor-harness-mcp-"));
    const model = createOpenAIModel({ modelId: "gpt-test", baseURL: server.url, apiKey: "test", api: "chat" });
    await expect(
      createHarness({ eventLogPath: join(dir, "arbor.db"), models: { main: model }, mcpServers: [{ name: "x", transport: "stdio" } as never] }),
    ).rejects.toSatisfy((error: unknown) => HarnessConfigError.isInstance(error) && /mcpServers/.test((error as Error).message));
  });
});

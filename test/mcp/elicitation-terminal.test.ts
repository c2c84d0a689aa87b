/**
 * `arbor run` on a terminal (a pseudo-terminal through util-linux `script`) asks an MCP server's
 * request for input itself: the line typed (a JSON object) is recorded as the answer (`via:
 * "terminal"`) and given to server-everything, and the run ends done.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { EVERYTHING_ENTRY } from "./helpers.ts";

let server: OpenAIServer;
beforeEach(async () => {
  server = await startOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

describe("arbor run on a terminal", () => {
  it("asks the request for input and gives the typed answer to the server", { timeout: 180_000 }, async () => {
    const dir = tempDir("arbor-elicit-tty-");
    const db = join(dir, "arbor.db");
    mkdirSync(join(dir, ".arbor"));
    writeFileSync(join(dir, ".arbor", "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, "stdio"] } } }));
    server.script(toolCallResponse([{ id: "call_ask", name: "everything__trigger-elicitation-request", arguments: {} }]), textResponse("thanks, Barbara"));
    const env = { OPENAI_API_KEY: "test-key", ARBOR_MCP_AUTH_DIR: join(dir, "auth") };
    const result = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "ask me"], {
      env,
      terminal: true,
      input: '{"name":"Barbara Liskov","check":true}\n',
    });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain('MCP server "everything" asks');
    expect(result.stdout).toContain("your answer (a JSON object, decline, cancel");
    expect(result.stdout).toContain("thanks, Barbara");
    const tools = (server.requests[1].body as { messages: { role: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
    expect(JSON.stringify(tools)).toContain("Name: Barbara Liskov");
    const listed = await runArbor(["--db", db, "elicitations", "latest", "--all", "--json"], { env });
    expect(listed.stdout.trim().split("\n").map((line) => JSON.parse(line) as { answer?: { via: string } })).toEqual([expect.objectContaining({ answer: expect.objectContaining({ action: "accept", via: "terminal" }) })]);
  });
});

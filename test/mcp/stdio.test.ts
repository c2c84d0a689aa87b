/**
 * MCP tools over stdio against the real @modelcontextprotocol/server-everything.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  connectMcpServers,
  McpServerUnavailableError,
  McpToolError,
  type McpConnection,
  type McpDiagnostic,
} from "../../src/adapters/mcp/index.ts";
import type { AgentTool } from "../../src/core/tools.ts";
import { everythingStdio, toolContext } from "./helpers.ts";

function tool(connection: McpConnection, name: string): AgentTool {
  const found = connection.tools.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name} in ${connection.tools.map((candidate) => candidate.name).join(", ")}`);
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a connected server-everything", () => {
  let mcp: McpConnection;
  beforeAll(async () => {
    mcp = await connectMcpServers([everythingStdio("everything", { env: { ARBOR_MCP_TEST: "visible" } })]);
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("lists its tools with server-prefixed names and their JSON Schemas", () => {
    expect(mcp.diagnostics).toEqual([]);
    expect(mcp.servers[0]).toMatchObject({ name: "everything", state: "connected", transportKind: "stdio" });
    expect(mcp.servers[0].serverInfo?.name).toBeTruthy();
    const names = mcp.tools.map((candidate) => candidate.name);
    expect(names).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum", "everything__get-tiny-image"]));
    expect(mcp.servers[0].toolNames).toEqual(names);
    expect(tool(mcp, "everything__get-sum").parameters).toEqual({
      type: "object",
      properties: { a: { type: "number", description: "First number" }, b: { type: "number", description: "Second number" } },
      required: ["a", "b"],
    });
    expect(tool(mcp, "everything__echo").description).toBe("Echoes back the input string");
  });

  it("echo returns the server's text", async () => {
    const echo = tool(mcp, "everything__echo");
    const args = echo.validate({ message: "hello, MCP" });
    expect(args.ok).toBe(true);
    const result = await echo.execute(args.ok ? args.value : {}, toolContext());
    expect(result.content).toEqual([{ type: "text", text: "Echo: hello, MCP" }]);
    expect(result.details).toEqual({ server: "everything", tool: "echo" });
  });

  it("get-sum adds on the server", async () => {
    const result = await tool(mcp, "everything__get-sum").execute({ a: 2.5, b: 40 }, toolContext());
    expect(result.content).toEqual([{ type: "text", text: "The sum of 2.5 and 40 is 42.5." }]);
  });

  it("validates arguments with the tool's JSON Schema before any call", () => {
    const sum = tool(mcp, "everything__get-sum");
    expect(sum.validate({ a: 1, b: "2" })).toEqual({ ok: false, message: 'Invalid arguments for tool "everything__get-sum": b: must be number' });
    expect(sum.validate({ a: 1 })).toMatchObject({ ok: false, message: expect.stringContaining("b: must have required property 'b'") });
  });

  it("turns an isError result into a thrown McpToolError with the server's text", async () => {
    const error = await tool(mcp, "everything__get-resource-reference").execute({ resourceId: 0 }, toolContext()).catch((caught: unknown) => caught);
    expect(McpToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'MCP tool "get-resource-reference" on server "everything" returned an error: Invalid resourceId: 0. Must be a finite positive integer.',
    );
  });

  it("turns a server-side rejection of bad arguments into an McpToolError (when validation is bypassed)", async () => {
    const error = await tool(mcp, "everything__get-sum").execute({ a: "one" }, toolContext()).catch((caught: unknown) => caught);
    expect(McpToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/get-sum/);
  });

  it("maps image and embedded-resource content to Arbor blocks", async () => {
    const image = await tool(mcp, "everything__get-tiny-image").execute({}, toolContext());
    expect(image.content.map((block) => block.type)).toEqual(["text", "image", "text"]);
    const png = image.content[1];
    expect(png.type === "image" && png.mimeType).toBe("image/png");
    expect(png.type === "image" && Buffer.from(png.data, "base64").subarray(1, 4).toString()).toBe("PNG");
    const reference = await tool(mcp, "everything__get-resource-reference").execute({ resourceId: 2 }, toolContext());
    expect(reference.content[1]).toEqual({ type: "text", text: expect.stringMatching(/^\[resource demo:\/\/resource\/dynamic\/text\/2 \(text\/plain\)\]\nResource 2: /) });
  });

  it("keeps structured content in details", async () => {
    const result = await tool(mcp, "everything__get-structured-content").execute({ location: "New York" }, toolContext());
    expect(result.details).toMatchObject({ server: "everything", tool: "get-structured-content", structuredContent: expect.any(Object) });
  });

  it("passes only the configured env plus the SDK's safe defaults to the child", async () => {
    process.env.ARBOR_MCP_SECRET = "must-not-leak";
    try {
      const result = await tool(mcp, "everything__get-env").execute({}, toolContext());
      const env = JSON.parse(result.content[0].type === "text" ? result.content[0].text : "{}") as Record<string, string>;
      expect(env.ARBOR_MCP_TEST).toBe("visible");
      expect(env.ARBOR_MCP_SECRET).toBeUndefined();
    } finally {
      delete process.env.ARBOR_MCP_SECRET;
    }
  });

  it("streams progress notifications as tool updates", async () => {
    const context = toolContext();
    const result = await tool(mcp, "everything__trigger-long-running-operation").execute({ duration: 0.2, steps: 2 }, context);
    expect(result.content[0]).toEqual({ type: "text", text: "Long running operation completed. Duration: 0.2 seconds, Steps: 2." });
    // The last notification may race the response; the first always arrives before it.
    expect(context.updates[0]?.content).toEqual([{ type: "text", text: "progress 1/2" }]);
    for (const update of context.updates) expect(update.content).toEqual([{ type: "text", text: expect.stringMatching(/^progress [12]\/2$/) }]);
  });

  it("honours the AbortSignal of a pending call", async () => {
    const controller = new AbortController();
    const context = toolContext(controller.signal);
    const pending = tool(mcp, "everything__trigger-long-running-operation").execute({ duration: 60, steps: 60 }, context);
    await vi.waitFor(() => expect(context.updates.length).toBeGreaterThan(0), { timeout: 20_000 });
    controller.abort(new Error("run aborted by user"));
    await expect(pending).rejects.toThrow("run aborted by user");
  });
});

describe("failures never hang a run", () => {
  it("a server killed mid-call fails the pending call, reports a diagnostic, and fails later calls at once", async () => {
    const seen: McpDiagnostic[] = [];
    // The call timeout is far beyond the test timeout: only close detection can end the call.
    const mcp = await connectMcpServers([everythingStdio()], { callTimeoutMs: 600_000, onDiagnostic: (diagnostic) => seen.push(diagnostic) });
    try {
      const pid = mcp.servers[0].pid!;
      const context = toolContext();
      const pending = tool(mcp, "everything__trigger-long-running-operation").execute({ duration: 300, steps: 300 }, context);
      await vi.waitFor(() => expect(context.updates.length).toBeGreaterThan(0), { timeout: 20_000 });
      process.kill(pid, "SIGKILL");
      const error = await pending.catch((caught: unknown) => caught);
      expect(McpServerUnavailableError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/^MCP server "everything" exited while tool "trigger-long-running-operation" was running/);
      expect(mcp.servers[0].state).toBe("exited");
      expect(mcp.diagnostics).toEqual([expect.objectContaining({ severity: "error", code: "server-exited", server: "everything" })]);
      expect(seen).toEqual(mcp.diagnostics);
      const later = await tool(mcp, "everything__echo").execute({ message: "x" }, toolContext()).catch((caught: unknown) => caught);
      expect(McpServerUnavailableError.isInstance(later)).toBe(true);
      expect((later as Error).message).toMatch(/has exited, so tool "echo" cannot run/);
    } finally {
      await mcp.close();
    }
  });

  it("a call that outlives callTimeoutMs fails with McpToolError", async () => {
    const mcp = await connectMcpServers([everythingStdio("slow", { callTimeoutMs: 2_000 })]);
    try {
      const error = await tool(mcp, "slow__trigger-long-running-operation").execute({ duration: 30, steps: 1 }, toolContext()).catch((caught: unknown) => caught);
      expect(McpToolError.isInstance(error)).toBe(true);
      expect((error as Error).message).toBe('MCP tool "trigger-long-running-operation" on server "slow" did not answer within 2000 ms');
      // The server is still usable afterwards (2 s is ample for an echo, even on a loaded machine).
      const echo = await tool(mcp, "slow__echo").execute({ message: "still here" }, toolContext());
      expect(echo.content).toEqual([{ type: "text", text: "Echo: still here" }]);
    } finally {
      await mcp.close();
    }
  });

  it("servers that cannot start give diagnostics while the others work", async () => {
    const mcp = await connectMcpServers([
      { name: "missing", transport: "stdio", command: "/nonexistent/arbor-mcp-server" },
      { name: "crashy", transport: "stdio", command: process.execPath, args: ["-e", "process.stderr.write('boom: no config'); process.exit(3)"] },
      everythingStdio("good"),
    ]);
    try {
      expect(mcp.servers.map((server) => server.state)).toEqual(["failed", "failed", "connected"]);
      expect(mcp.diagnostics.map((diagnostic) => [diagnostic.server, diagnostic.code])).toEqual([
        ["missing", "connect-failed"],
        ["crashy", "connect-failed"],
      ]);
      expect(mcp.diagnostics[0].message).toMatch(/ENOENT/);
      expect(mcp.diagnostics[1].message).toMatch(/boom: no config/);
      expect(mcp.tools.every((candidate) => candidate.name.startsWith("good__"))).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it("close() stops the child, is idempotent, and later calls fail clearly", async () => {
    const mcp = await connectMcpServers([everythingStdio()]);
    const pid = mcp.servers[0].pid!;
    expect(isAlive(pid)).toBe(true);
    await Promise.all([mcp.close(), mcp.close()]);
    await mcp.close();
    expect(mcp.servers[0].state).toBe("closed");
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
    await expect(tool(mcp, "everything__echo").execute({ message: "x" }, toolContext())).rejects.toThrow(
      'MCP server "everything" has been closed, so tool "echo" cannot run',
    );
    expect(mcp.diagnostics).toEqual([]);
  });
});

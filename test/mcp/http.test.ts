/**
 * MCP tools over Streamable HTTP: server-everything serving on a loopback port.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connectMcpServers, McpServerUnavailableError, McpToolError, type McpConnection } from "../../src/adapters/mcp/index.ts";
import { startEverythingHttp, toolContext } from "./helpers.ts";

describe("Streamable HTTP", () => {
  let server: Awaited<ReturnType<typeof startEverythingHttp>>;
  let mcp: McpConnection;
  beforeAll(async () => {
    server = await startEverythingHttp();
    mcp = await connectMcpServers([{ name: "remote", transport: "http", url: server.url, headers: { "x-arbor-test": "1" } }], { callTimeoutMs: 20_000 });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.stop();
  });

  it("lists tools and calls echo and get-sum", async () => {
    expect(mcp.diagnostics).toEqual([]);
    expect(mcp.servers[0]).toMatchObject({ state: "connected", transportKind: "http", pid: null });
    const echo = mcp.tools.find((tool) => tool.name === "remote__echo")!;
    const sum = mcp.tools.find((tool) => tool.name === "remote__get-sum")!;
    expect((await echo.execute({ message: "over http" }, toolContext())).content).toEqual([{ type: "text", text: "Echo: over http" }]);
    expect((await sum.execute({ a: 1, b: 2 }, toolContext())).content).toEqual([{ type: "text", text: "The sum of 1 and 2 is 3." }]);
  });

  it("reports isError results as McpToolError", async () => {
    const reference = mcp.tools.find((tool) => tool.name === "remote__get-resource-reference")!;
    const error = await reference.execute({ resourceId: -1 }, toolContext()).catch((caught: unknown) => caught);
    expect(McpToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/Invalid resourceId: -1/);
  });

  it("fails calls with an error once the server is gone, instead of hanging", async () => {
    const other = await startEverythingHttp();
    const connection = await connectMcpServers([{ name: "gone", transport: "http", url: other.url }], { callTimeoutMs: 15_000 });
    try {
      await other.stop();
      const error = await connection.tools.find((tool) => tool.name === "gone__echo")!.execute({ message: "x" }, toolContext()).catch((caught: unknown) => caught);
      expect(McpToolError.isInstance(error) || McpServerUnavailableError.isInstance(error)).toBe(true);
    } finally {
      await connection.close();
    }
  });
});

describe("Streamable HTTP server killed mid-call", () => {
  it("fails the pending call once the SDK stops reconnecting, long before the call timeout", async () => {
    const other = await startEverythingHttp();
    // The call timeout is far beyond the test timeout: only loss detection can end the call.
    const connection = await connectMcpServers([{ name: "dying", transport: "http", url: other.url }], { callTimeoutMs: 600_000 });
    try {
      const context = toolContext();
      const pending = connection.tools.find((tool) => tool.name === "dying__trigger-long-running-operation")!.execute({ duration: 300, steps: 300 }, context);
      await vi.waitFor(() => expect(context.updates.length).toBeGreaterThan(0), { timeout: 20_000 });
      await other.stop();
      const error = await pending.catch((caught: unknown) => caught);
      expect(McpServerUnavailableError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/^lost the connection to MCP server "dying" \(.*\) while tool "trigger-long-running-operation" was running$/);
      expect(connection.diagnostics.some((diagnostic) => diagnostic.code === "transport-error")).toBe(true);
    } finally {
      await connection.close();
      await other.stop();
    }
  });
});

describe("HTTP connection failures", () => {
  it("gives a connect-failed diagnostic for a closed port and for a non-MCP endpoint", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const plain = createHttpServer((request, response) => {
      seen.push(request.headers);
      response.writeHead(404, { "content-type": "text/plain" }).end("not here");
    });
    await new Promise<void>((ready) => plain.listen(0, "127.0.0.1", ready));
    const address = plain.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const mcp = await connectMcpServers(
        [
          { name: "closed", transport: "http", url: "http://127.0.0.1:1/mcp" },
          { name: "plain", transport: "http", url: `http://127.0.0.1:${port}/mcp`, headers: { authorization: "Bearer t0ken" } },
        ],
        { connectTimeoutMs: 10_000 },
      );
      expect(mcp.tools).toEqual([]);
      expect(mcp.diagnostics.map((diagnostic) => [diagnostic.server, diagnostic.code])).toEqual([
        ["closed", "connect-failed"],
        ["plain", "connect-failed"],
      ]);
      expect(seen[0]?.authorization).toBe("Bearer t0ken");
      expect(mcp.diagnostics.some((diagnostic) => diagnostic.message.includes("t0ken"))).toBe(false);
      await mcp.close();
    } finally {
      await new Promise((done) => plain.close(done));
    }
  });
});

/**
 * The CLI's MCP servers: `--mcp <name>=<command or URL>` and `.arbor/mcp.json` (the `mcpServers`
 * shape), parsed and refused with messages naming what is wrong; and `arbor run --mcp` with the
 * real server-everything over stdio and over Streamable HTTP on loopback, through the real
 * @ai-sdk/openai client against the loopback model server.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadMcpJson, parseMcpFlag, resolveMcpServers, splitCommandLine } from "../../src/cli/mcp-config.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { EVERYTHING_ENTRY, startEverythingHttp } from "./helpers.ts";

describe("--mcp and .arbor/mcp.json parsing", () => {
  it("splits command lines like a shell does for quotes and backslashes", () => {
    expect(splitCommandLine(`node "my server.js" --flag='a b' x\\ y ""`)).toEqual(["node", "my server.js", "--flag=a b", "x y", ""]);
    expect(() => splitCommandLine(`node "open`)).toThrow(/Unclosed " quote/);
  });

  it("reads a URL as Streamable HTTP and anything else as a stdio command", () => {
    expect(parseMcpFlag("docs=https://mcp.example.com/mcp")).toEqual({ name: "docs", transport: "http", url: "https://mcp.example.com/mcp", oauth: {} });
    expect(parseMcpFlag(`fs=npx -y @modelcontextprotocol/server-filesystem "/tmp/my dir"`)).toEqual({ name: "fs", transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/my dir"] });
    expect(() => parseMcpFlag("nothing")).toThrow(/--mcp "nothing": use --mcp <name>=<command or URL>/);
    expect(() => parseMcpFlag("ws=ws://host/mcp")).toThrow(/only http:\/\/ and https:\/\//);
  });

  it("reads the mcpServers shape with ${VAR} expansion; flags override the file's server of the same name", () => {
    const dir = tempDir("arbor-mcp-json-");
    mkdirSync(join(dir, ".arbor"));
    writeFileSync(
      join(dir, ".arbor", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          files: { command: "npx", args: ["-y", "server-filesystem", "${HOME_DIR:-/srv}"], env: { TOKEN: "${FILES_TOKEN}" } },
          docs: { type: "http", url: "https://docs.example.com/mcp", headers: { authorization: "Bearer ${DOCS_TOKEN}" }, oauth: { scope: "read" } },
          old: { command: "legacy", disabled: true },
          open: { url: "https://open.example.com/mcp", oauth: false },
        },
      }),
    );
    const env = { FILES_TOKEN: "f-1", DOCS_TOKEN: "d-2" };
    expect(resolveMcpServers([], dir, env)).toEqual([
      { name: "files", transport: "stdio", command: "npx", args: ["-y", "server-filesystem", "/srv"], env: { TOKEN: "f-1" }, cwd: dir },
      { name: "docs", transport: "http", url: "https://docs.example.com/mcp", headers: { authorization: "Bearer d-2" }, oauth: { scope: "read" } },
      { name: "open", transport: "http", url: "https://open.example.com/mcp" },
    ]);
    expect(resolveMcpServers(["docs=http://127.0.0.1:9/mcp"], dir, env).map((server) => [server.name, server.transport === "http" ? server.url : server.command])).toEqual([
      ["files", "npx"],
      ["open", "https://open.example.com/mcp"],
      ["docs", "http://127.0.0.1:9/mcp"],
    ]);
    expect(() => resolveMcpServers([], dir, { DOCS_TOKEN: "x" })).toThrow(/mcpServers\.files\.env\.TOKEN: \$\{FILES_TOKEN\} is not set/);
  });

  it("runs a stdio server in the project folder unless its entry names a cwd", () => {
    const dir = tempDir("arbor-mcp-cwd-");
    mkdirSync(join(dir, ".arbor"));
    mkdirSync(join(dir, "tools"));
    writeFileSync(join(dir, ".arbor", "mcp.json"), JSON.stringify({ mcpServers: { own: { command: "srv", cwd: "tools" }, plain: { command: "srv" } } }));
    const byName = new Map(resolveMcpServers(["fs=npx -y @modelcontextprotocol/server-filesystem ."], dir).map((server) => [server.name, server]));
    expect(byName.get("fs")).toMatchObject({ transport: "stdio", cwd: dir });
    expect(byName.get("plain")).toMatchObject({ transport: "stdio", cwd: dir });
    expect(byName.get("own")).toMatchObject({ transport: "stdio", cwd: join(dir, "tools") });
  });

  it("refuses bad files naming the file and the field", () => {
    const dir = tempDir("arbor-mcp-json-");
    const path = join(dir, "mcp.json");
    writeFileSync(path, "{ not json");
    expect(() => loadMcpJson(path)).toThrow(/mcp\.json is not valid JSON/);
    writeFileSync(path, JSON.stringify({ mcpServers: { a: { command: "x", port: 1 } } }));
    expect(() => loadMcpJson(path)).toThrow(/mcpServers\.a: Unrecognized key: "port"/);
    writeFileSync(path, JSON.stringify({ mcpServers: { a: { type: "sse", url: "https://x/sse" } } }));
    expect(() => loadMcpJson(path)).toThrow(/"type": "sse" .* is not supported/);
    writeFileSync(path, JSON.stringify({ mcpServers: { a: { command: "x", url: "https://x/mcp" } } }));
    expect(() => loadMcpJson(path)).toThrow(/an HTTP server has "url" .*not "command"/);
    expect(() => resolveMcpServers(["bad name=x"], dir)).toThrow(/MCP server "bad name"/);
    expect(loadMcpJson(join(dir, "missing.json"))).toEqual([]);
  });
});

describe("arbor run --mcp", () => {
  let server: OpenAIServer;
  beforeEach(async () => {
    server = await startOpenAIServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("offers and runs the tools of server-everything over stdio (--mcp) and over Streamable HTTP (.arbor/mcp.json)", { timeout: 180_000 }, async () => {
    const dir = tempDir("arbor-mcp-run-");
    const db = join(dir, "arbor.db");
    const http = await startEverythingHttp();
    try {
      mkdirSync(join(dir, ".arbor"));
      writeFileSync(join(dir, ".arbor", "mcp.json"), JSON.stringify({ mcpServers: { remote: { url: http.url } } }));
      server.script(
        toolCallResponse([
          { id: "call_local", name: "local__echo", arguments: { message: "over stdio" } },
          { id: "call_remote", name: "remote__get-sum", arguments: { a: 2, b: 3 } },
        ]),
        textResponse("both ran"),
      );
      const result = await runArbor(["--db", db, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "--mcp", `local=${process.execPath} ${EVERYTHING_ENTRY} stdio`, "use the tools"], {
        env: { OPENAI_API_KEY: "test-key", ARBOR_MCP_AUTH_DIR: join(dir, "auth") },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("both ran");
      const offered = (server.requests[0].body.tools as { function: { name: string } }[]).map((tool) => tool.function.name);
      expect(offered).toEqual(expect.arrayContaining(["local__echo", "remote__get-sum", "bash"]));
      const tools = (server.requests[1].body as { messages: { role: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
      expect(JSON.stringify(tools)).toContain("Echo: over stdio");
      expect(JSON.stringify(tools)).toContain("The sum of 2 and 3 is 5.");
    } finally {
      await http.stop();
    }
  });

  it("prints a server that cannot start and runs without it", { timeout: 120_000 }, async () => {
    const dir = tempDir("arbor-mcp-run-");
    server.script(textResponse("fine"));
    const result = await runArbor(["--db", join(dir, "arbor.db"), "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "--mcp", "ghost=/nonexistent/mcp-server", "hi"], {
      env: { OPENAI_API_KEY: "test-key", ARBOR_MCP_AUTH_DIR: join(dir, "auth") },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/mcp ghost: cannot connect to MCP server "ghost"/);
  });
});

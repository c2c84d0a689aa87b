/**
 * Pure parts of the MCP adapter: config validation, tool names, content mapping.
 */
import { describe, expect, it } from "vitest";
import { connectMcpServers, mapMcpContent, McpConfigError, mcpToolName, parseMcpServerConfigs } from "../../src/adapters/mcp/index.ts";

describe("parseMcpServerConfigs", () => {
  it("names the bad field", () => {
    const cases: [unknown, RegExp][] = [
      [[{ name: "has space", transport: "stdio", command: "x" }], /servers\[0\]\.name: must be 1-32 characters/],
      [[{ name: "ok", transport: "stdio", command: "" }], /servers\[0\]\.command: must name the program to run/],
      [[{ name: "a", transport: "stdio", command: "x" }, { name: "b", transport: "http", url: "ftp://host/x" }], /servers\[1\]\.url: must be an http/],
      [[{ name: "a", transport: "ws", url: "ws://x" }], /servers\[0\]\.transport/],
      [[{ name: "a", transport: "stdio", command: "x", extra: 1 }], /servers\[0\]: Unrecognized key: "extra"/],
      [[{ name: "a", transport: "stdio", command: "x" }, { name: "a", transport: "stdio", command: "y" }], /servers\[1\]\.name: "a" is used by an earlier server/],
    ];
    for (const [configs, message] of cases) {
      let caught: unknown;
      try {
        parseMcpServerConfigs(configs);
      } catch (error) {
        caught = error;
      }
      expect(McpConfigError.isInstance(caught)).toBe(true);
      expect((caught as Error).message).toMatch(message);
    }
  });

  it("rejects bad options before starting anything", async () => {
    await expect(connectMcpServers([], { callTimeoutMs: 0 })).rejects.toThrow(/callTimeoutMs must be a positive integer/);
    await expect(connectMcpServers([{ name: "x y", transport: "stdio", command: "never-run" }])).rejects.toSatisfy(McpConfigError.isInstance);
  });

  it("connects to nothing for an empty list", async () => {
    const mcp = await connectMcpServers([]);
    expect(mcp).toMatchObject({ tools: [], diagnostics: [], servers: [] });
    await mcp.close();
  });
});

describe("mcpToolName", () => {
  it("prefixes with the server and keeps names model-safe, unique and at most 64 characters", () => {
    expect(mcpToolName("everything", "get-sum")).toBe("everything__get-sum");
    expect(mcpToolName("docs", "search.v2/all")).toBe("docs__search_v2_all");
    const long1 = mcpToolName("server", `${"x".repeat(70)}-one`);
    const long2 = mcpToolName("server", `${"x".repeat(70)}-two`);
    expect(long1).toHaveLength(64);
    expect(long1).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(long1).not.toBe(long2);
    expect(mcpToolName("server", `${"x".repeat(70)}-one`)).toBe(long1);
  });
});

describe("mapMcpContent", () => {
  it("maps every MCP content kind", () => {
    const png = Buffer.from("\x89PNG fake").toString("base64");
    expect(
      mapMcpContent({
        content: [
          { type: "text", text: "hi" },
          { type: "image", data: png, mimeType: "image/png" },
          { type: "audio", data: Buffer.from("12345").toString("base64"), mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "alpha" } },
          { type: "resource", resource: { uri: "file:///b.png", mimeType: "image/png", blob: png } },
          { type: "resource", resource: { uri: "file:///c.bin", blob: Buffer.from("abcdef").toString("base64") } },
          { type: "resource_link", uri: "file:///d.md", name: "d.md", description: "notes" },
          { type: "hologram", payload: 1 },
        ],
      }),
    ).toEqual([
      { type: "text", text: "hi" },
      { type: "image", data: png, mimeType: "image/png" },
      { type: "text", text: "[audio audio/wav, 5 bytes, not shown]" },
      { type: "text", text: "[resource file:///a.txt (text/plain)]\nalpha" },
      { type: "image", data: png, mimeType: "image/png" },
      { type: "text", text: "[resource file:///c.bin, 6 bytes of binary data, not shown]" },
      { type: "text", text: "[resource link d.md file:///d.md: notes]" },
      { type: "text", text: '[hologram content] {"type":"hologram","payload":1}' },
    ]);
  });

  it("falls back to structured content, then to a fixed note", () => {
    expect(mapMcpContent({ content: [], structuredContent: { temperature: 21 } })).toEqual([{ type: "text", text: '{"temperature":21}' }]);
    expect(mapMcpContent({})).toEqual([{ type: "text", text: "(no content)" }]);
  });
});

/**
 * OAuth from the command line: `arbor run --mcp secure=<URL>` against a loopback MCP server that
 * requires OAuth (oauth-server.ts) says consent is needed and runs without the server;
 * `arbor mcp login` prints the consent link, then stores the tokens from the redirect URL; the next
 * `arbor run` uses the server's tool. Tokens live in ARBOR_MCP_AUTH_DIR, one 0600 file per tenant.
 * Real CLI processes, the SDK's auth router and bearer middleware, @ai-sdk/openai against the
 * loopback model server.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tenantFileName } from "../../src/adapters/mcp/oauth-store.ts";
import { startOpenAIServer, textResponse, toolCallResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, tempDir } from "../cli/cli-helpers.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "./oauth-server.ts";

let model: OpenAIServer;
let secure: OAuthMcpServer;
beforeEach(async () => {
  model = await startOpenAIServer();
  secure = await startOAuthMcpServer();
});
afterEach(async () => {
  await secure.close();
  await model.close();
});

describe("arbor mcp login", () => {
  it("asks for consent, stores the tokens from the redirect, and the next run uses the server", { timeout: 180_000 }, async () => {
    const dir = tempDir("arbor-mcp-oauth-cli-");
    const authDir = join(dir, "auth");
    const env = { OPENAI_API_KEY: "test-key", ARBOR_MCP_AUTH_DIR: authDir };
    const mcp = ["--mcp", `secure=${secure.url}`];
    const run = (prompt: string) => runArbor(["--db", join(dir, "arbor.db"), "run", "--base-url", model.url, "--model", "openai:gpt-test", "--cwd", dir, ...mcp, prompt], { env });

    model.script(textResponse("no tools"));
    const first = await run("hi");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/mcp secure: MCP server "secure" needs your consent \(tenant "default"\): open http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    expect(first.stderr).toContain("arbor mcp login secure");

    const link = await runArbor(["mcp", "login", "secure", ...mcp, "--cwd", dir], { env });
    expect(link.code).toBe(1);
    const url = link.stdout.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    const consent = await fetch(url, { redirect: "manual" });
    const redirect = consent.headers.get("location")!;

    const login = await runArbor(["mcp", "login", "secure", redirect, ...mcp, "--cwd", dir], { env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toBe('MCP server "secure" is authorized for tenant "default".\n');
    expect(readdirSync(authDir)).toEqual([tenantFileName("default")]);
    expect(statSync(join(authDir, tenantFileName("default"))).mode & 0o777).toBe(0o600);

    secure.expireAccessTokens();
    model.script(toolCallResponse([{ id: "call_who", name: "secure__whoami", arguments: {} }]), textResponse("it is you"));
    const second = await run("who am I?");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toContain("mcp secure:");
    const tools = (model.requests.at(-1)!.body as { messages: { role: string; content?: unknown }[] }).messages.filter((message) => message.role === "tool");
    expect(JSON.stringify(tools)).toContain("hello person");
    expect(secure.grants).toMatchObject({ authorization_code: 1, refresh_token: 1 });
  });
});

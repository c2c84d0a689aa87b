/**
 * MCP over Streamable HTTP with OAuth 2.1: a real SDK server on loopback that requires a bearer
 * token (oauth-server.ts), and Arbor's client through the SDK's auth(): consent needed →
 * MCP_AUTH_REQUIRED with the authorization URL; the code finished by another store instance
 * (another process); expiry refreshed with no browser; tenants kept apart; a refused refresh
 * asks for consent again; the client_credentials grant.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  authorizeMcpServer,
  connectMcpServers,
  createFileMcpAuthStore,
  finishMcpAuthorization,
  McpAuthRequiredError,
  McpConfigError,
  tenantFileName,
  type McpHttpServerConfig,
} from "../../src/adapters/mcp/index.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "./oauth-server.ts";
import { toolContext } from "./helpers.ts";

let server: OAuthMcpServer;
let dir: string;
beforeEach(async () => {
  server = await startOAuthMcpServer();
  dir = mkdtempSync(join(tmpdir(), "arbor-mcp-oauth-"));
});
afterEach(async () => {
  await server.close();
});

const textOf = (result: { content: { type: string; text?: string }[] }) => result.content.map((block) => block.text).join("");

/** The person: opens the consent page, which redirects with a code; returns the redirect URL. */
async function consent(authorizationUrl: string): Promise<string> {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  expect(response.status).toBe(302);
  return response.headers.get("location")!;
}

describe("MCP OAuth (authorization code)", { timeout: 60_000 }, () => {
  it("asks for consent with a typed error, then works from the stored token; expiry is refreshed without a browser", async () => {
    const config: McpHttpServerConfig = { name: "secure", transport: "http", url: server.url, oauth: {} };
    const auth = { store: createFileMcpAuthStore(dir), tenant: "acme" };

    const first = await connectMcpServers([config], { auth });
    expect(first.tools).toEqual([]);
    expect(first.diagnostics).toHaveLength(1);
    const diagnostic = first.diagnostics[0];
    expect(diagnostic).toMatchObject({ code: "auth-required", server: "secure", severity: "error" });
    expect(diagnostic.authorizationUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    expect(new URL(diagnostic.authorizationUrl!).searchParams.get("code_challenge_method")).toBe("S256");
    await first.close();

    const error = await authorizeMcpServer(config, auth).catch((caught: unknown) => caught);
    expect(McpAuthRequiredError.isInstance(error)).toBe(true);
    expect((error as McpAuthRequiredError).code).toBe("MCP_AUTH_REQUIRED");
    const authorizationUrl = (error as McpAuthRequiredError).details.authorizationUrl as string;
    expect((error as Error).message).toContain(authorizationUrl);

    // Consent, finished through another store object on the same folder (another process would do the same).
    const redirect = await consent(authorizationUrl);
    await finishMcpAuthorization(config, redirect, { store: createFileMcpAuthStore(dir), tenant: "acme" });
    expect(server.grants.authorization_code).toBe(1);

    const mcp = await connectMcpServers([config], { auth: { store: createFileMcpAuthStore(dir), tenant: "acme" } });
    try {
      expect(mcp.diagnostics).toEqual([]);
      const whoami = mcp.tools.find((tool) => tool.name === "secure__whoami")!;
      expect(textOf(await whoami.execute({ greeting: "hi" }, toolContext()))).toBe("hi person");

      // The access token expires mid-session: the SDK gets 401, refreshes, retries.
      const refusedBefore = server.refused;
      server.expireAccessTokens();
      expect(textOf(await whoami.execute({}, toolContext()))).toBe("hello person");
      expect(server.refused).toBeGreaterThan(refusedBefore);
      expect(server.grants.refresh_token).toBe(1);
    } finally {
      await mcp.close();
    }

    // A new connection after another expiry: the stored (rotated) refresh token is used; no consent.
    server.expireAccessTokens();
    const again = await connectMcpServers([config], { auth: { store: createFileMcpAuthStore(dir), tenant: "acme" } });
    try {
      expect(again.diagnostics).toEqual([]);
      expect(textOf(await again.tools[0].execute({}, toolContext()))).toBe("hello person");
      expect(server.grants).toMatchObject({ authorization_code: 1, refresh_token: 2 });
    } finally {
      await again.close();
    }

    // The store: one file for the tenant, readable by its owner only, the tenant name not in the file name.
    const files = readdirSync(dir).filter((name) => name.endsWith(".json"));
    expect(files).toEqual([tenantFileName("acme")]);
    expect(statSync(join(dir, files[0])).mode & 0o777).toBe(0o600);
    expect(files[0]).not.toContain("acme");
  });

  it("keeps tenants apart: another tenant's connection needs its own consent", async () => {
    const config: McpHttpServerConfig = { name: "secure", transport: "http", url: server.url, oauth: {} };
    const store = createFileMcpAuthStore(dir);
    const error = await authorizeMcpServer(config, { store, tenant: "acme" }).catch((caught: unknown) => caught);
    await finishMcpAuthorization(config, await consent((error as McpAuthRequiredError).details.authorizationUrl as string), { store, tenant: "acme" });

    const other = await connectMcpServers([config], { auth: { store, tenant: "globex" } });
    expect(other.tools).toEqual([]);
    expect(other.diagnostics.map((item) => item.code)).toEqual(["auth-required"]);
    await other.close();
    const acme = JSON.parse(readFileSync(join(dir, tenantFileName("acme")), "utf8")) as { servers: Record<string, { tokens?: unknown }> };
    const globex = JSON.parse(readFileSync(join(dir, tenantFileName("globex")), "utf8")) as { tenant: string; servers: Record<string, { tokens?: unknown }> };
    expect(acme.servers[server.url].tokens).toBeDefined();
    expect(globex.tenant).toBe("globex");
    expect(globex.servers[server.url].tokens).toBeUndefined();
  });

  it("a refused refresh mid-session fails the call with MCP_AUTH_REQUIRED and a new consent URL", async () => {
    const config: McpHttpServerConfig = { name: "secure", transport: "http", url: server.url, oauth: {} };
    const auth = { store: createFileMcpAuthStore(dir), tenant: "acme" };
    const error = await authorizeMcpServer(config, auth).catch((caught: unknown) => caught);
    await finishMcpAuthorization(config, await consent((error as McpAuthRequiredError).details.authorizationUrl as string), auth);
    const mcp = await connectMcpServers([config], { auth });
    try {
      server.expireAccessTokens();
      server.revokeRefreshTokens();
      const failure = await mcp.tools[0].execute({}, toolContext()).catch((caught: unknown) => caught);
      expect(McpAuthRequiredError.isInstance(failure)).toBe(true);
      expect((failure as McpAuthRequiredError).details).toMatchObject({ server: "secure", tenant: "acme", tool: "whoami" });
      expect((failure as McpAuthRequiredError).details.authorizationUrl).toMatch(/\/authorize\?/);
    } finally {
      await mcp.close();
    }
  });
});

describe("MCP OAuth (client credentials)", { timeout: 60_000 }, () => {
  it("gets a token with no person, and a new one when it expires", async () => {
    const { clientId, clientSecret } = server.registerMachineClient();
    const config: McpHttpServerConfig = { name: "machine", transport: "http", url: server.url, oauth: { grant: "client_credentials", clientId, clientSecret } };
    const mcp = await connectMcpServers([config], { auth: { store: createFileMcpAuthStore(dir), tenant: "ops" } });
    try {
      expect(mcp.diagnostics).toEqual([]);
      expect(textOf(await mcp.tools[0].execute({}, toolContext()))).toBe("hello machine");
      server.expireAccessTokens();
      expect(textOf(await mcp.tools[0].execute({}, toolContext()))).toBe("hello machine");
      expect(server.grants).toMatchObject({ client_credentials: 2, authorization_code: 0 });
    } finally {
      await mcp.close();
    }
  });

  it("refuses client_credentials without a clientId, naming the field", async () => {
    const error = await connectMcpServers([{ name: "m", transport: "http", url: server.url, oauth: { grant: "client_credentials" } }]).catch((caught: unknown) => caught);
    expect(McpConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("servers[0].oauth.clientId");
  });
});

describe("file auth store", () => {
  it("refuses a file that is not a store file and leaves it as it is", async () => {
    const path = join(dir, tenantFileName("acme"));
    writeFileSync(path, "my notes\n");
    const store = createFileMcpAuthStore(dir);
    await expect(store.get("acme", server.url)).rejects.toSatisfy((error: unknown) => McpConfigError.isInstance(error) && (error as Error).message.includes(path));
    await expect(store.update("acme", server.url, () => ({}))).rejects.toSatisfy((error: unknown) => McpConfigError.isInstance(error));
    expect(readFileSync(path, "utf8")).toBe("my notes\n");
  });
});

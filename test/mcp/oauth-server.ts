/**
 * A real MCP server that requires OAuth 2.1, on a loopback port, built from the MCP SDK's
 * server pieces: McpServer + StreamableHTTPServerTransport (stateless) behind the SDK's
 * bearer-auth middleware, and the SDK's auth router (metadata, dynamic registration,
 * authorize, token) over an in-test authorization server. Consent is given by whoever fetches
 * the authorization URL (the test plays the person). Access tokens expire on demand
 * (`expireAccessTokens`) or after `accessTtlSeconds`; refresh tokens rotate.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthServerProvider, AuthorizationParams } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { z } from "zod";

interface Grant {
  clientId: string;
  subject: string;
  expiresAt: number;
}

export interface OAuthMcpServer {
  /** The MCP endpoint. */
  url: string;
  /** Grants made, by kind (what the token endpoint answered successfully). */
  grants: { authorization_code: number; refresh_token: number; client_credentials: number };
  /** Requests to /mcp refused with 401. */
  refused: number;
  /** Makes every access token issued so far expired. */
  expireAccessTokens(): void;
  /** Refuses every refresh token issued so far (the user revoked the app). */
  revokeRefreshTokens(): void;
  /** A pre-registered confidential client for the client_credentials grant. */
  registerMachineClient(): { clientId: string; clientSecret: string };
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 with a free port. */
export async function startOAuthMcpServer(options: { accessTtlSeconds?: number } = {}): Promise<OAuthMcpServer> {
  const ttl = options.accessTtlSeconds ?? 3600;
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, { clientId: string; params: AuthorizationParams }>();
  const access = new Map<string, Grant>();
  const refresh = new Map<string, { clientId: string; subject: string }>();
  const grants = { authorization_code: 0, refresh_token: 0, client_credentials: 0 };
  const state = { refused: 0 };

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => clients.get(id),
    registerClient: (client) => {
      const full = { ...client, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) } as OAuthClientInformationFull;
      clients.set(full.client_id, full);
      return full;
    },
  };
  const issue = (clientId: string, subject: string, withRefresh: boolean): OAuthTokens => {
    const token = `at-${randomUUID()}`;
    access.set(token, { clientId, subject, expiresAt: Date.now() + ttl * 1000 });
    const tokens: OAuthTokens = { access_token: token, token_type: "Bearer", expires_in: ttl };
    if (withRefresh) {
      const refreshToken = `rt-${randomUUID()}`;
      refresh.set(refreshToken, { clientId, subject });
      tokens.refresh_token = refreshToken;
    }
    return tokens;
  };
  const provider: OAuthServerProvider = {
    clientsStore,
    async authorize(client, params, res) {
      // The person consents at once: the redirect carries a code.
      const code = `code-${randomUUID()}`;
      codes.set(code, { clientId: client.client_id, params });
      const target = new URL(params.redirectUri);
      target.searchParams.set("code", code);
      if (params.state) target.searchParams.set("state", params.state);
      res.redirect(302, target.href);
    },
    async challengeForAuthorizationCode(_client, code) {
      const entry = codes.get(code);
      if (!entry) throw new InvalidGrantError("unknown authorization code");
      return entry.params.codeChallenge;
    },
    async exchangeAuthorizationCode(client, code) {
      const entry = codes.get(code);
      if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError("unknown authorization code");
      codes.delete(code);
      grants.authorization_code++;
      return issue(client.client_id, "person", true);
    },
    async exchangeRefreshToken(client, refreshToken) {
      const entry = refresh.get(refreshToken);
      if (!entry || entry.clientId !== client.client_id) throw new InvalidGrantError("refresh token refused");
      refresh.delete(refreshToken); // rotation
      grants.refresh_token++;
      return issue(client.client_id, entry.subject, true);
    },
    async verifyAccessToken(token) {
      const grant = access.get(token);
      if (!grant || grant.expiresAt <= Date.now()) throw new InvalidTokenError("access token expired or unknown");
      return { token, clientId: grant.clientId, scopes: [], expiresAt: Math.floor(grant.expiresAt / 1000), extra: { subject: grant.subject } };
    },
  };

  const app = createMcpExpressApp({ host: "127.0.0.1" });
  // Listen first: the routes need the base URL, and express reads them per request.
  const http: Server = createServer(app as never);
  await new Promise<void>((ready) => http.listen(0, "127.0.0.1", ready));
  const address = http.address();
  const base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  // The client_credentials grant (the SDK's token handler leaves it to the server).
  app.post("/token", (req: { headers: Record<string, string>; on: (event: string, listener: (chunk?: Buffer) => void) => void; body?: unknown }, res: { status(code: number): { json(body: unknown): void } }, next: () => void) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk) => chunks.push(chunk!));
    req.on("end", () => {
      const body = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      if (body.get("grant_type") !== "client_credentials") {
        (req as { body?: unknown }).body = Object.fromEntries(body);
        (req as { _body?: boolean })._body = true;
        next();
        return;
      }
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
      const [id, secret] = basic ? Buffer.from(basic[1], "base64").toString("utf8").split(":").map(decodeURIComponent) : [body.get("client_id"), body.get("client_secret")];
      const client = id ? clients.get(id) : undefined;
      if (!client || client.client_secret !== secret) {
        res.status(401).json({ error: "invalid_client", error_description: "unknown client or wrong secret" });
        return;
      }
      grants.client_credentials++;
      res.status(200).json(issue(client.client_id, "machine", false));
    });
  });
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: new URL(`${base}/mcp`) }));
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(`${base}/mcp`)) });
  const countRefused = (req: unknown, res: { statusCode: number; on(event: string, listener: () => void): void }, next: () => void) => {
    res.on("finish", () => {
      if (res.statusCode === 401) state.refused++;
    });
    next();
  };
  app.post("/mcp", countRefused, bearer, async (req: { body: unknown; auth?: { extra?: { subject?: string } } }, res: { on(event: string, listener: () => void): void }) => {
    const server = new McpServer({ name: "oauth-test", version: "1.0.0" });
    server.registerTool("whoami", { description: "Who the token belongs to", inputSchema: { greeting: z.string().optional() } }, async ({ greeting }) => ({
      content: [{ type: "text", text: `${greeting ?? "hello"} ${req.auth?.extra?.subject ?? "nobody"}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req as never, res as never, req.body);
  });
  app.get("/mcp", (_req: unknown, res: { status(code: number): { end(): void } }) => res.status(405).end());

  return {
    url: `${base}/mcp`,
    grants,
    get refused() {
      return state.refused;
    },
    expireAccessTokens() {
      for (const grant of access.values()) grant.expiresAt = 0;
    },
    revokeRefreshTokens() {
      refresh.clear();
    },
    registerMachineClient() {
      const clientId = `machine-${randomUUID()}`;
      const clientSecret = `secret-${randomUUID()}`;
      clients.set(clientId, { client_id: clientId, client_secret: clientSecret, redirect_uris: [], grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic" } as OAuthClientInformationFull);
      return { clientId, clientSecret };
    },
    async close() {
      http.closeAllConnections();
      await new Promise((done) => http.close(done));
    },
  };
}

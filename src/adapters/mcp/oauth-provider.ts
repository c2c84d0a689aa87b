/**
 * The OAuth 2.1 client of one remote MCP server: the MCP SDK's `OAuthClientProvider` over one tenant's {@link McpAuthStore} record; the SDK drives
 * the flow. `authorization_code` records the consent URL and PKCE verifier (any process may finish it) and fails with `McpAuthRequiredError`;
 * `client_credentials` needs no user. Token values never reach logs or diagnostics.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { McpAuthRecord, McpAuthStore } from "./oauth-store.ts";

/**
 * The redirect URL registered when a config names none: the user's browser lands there after
 * consent, and the `code` of its query finishes the authorization (`finishMcpAuthorization`).
 * @example
 * const code = new URL(pastedUrl).searchParams.get("code"); // pastedUrl starts with DEFAULT_MCP_REDIRECT_URL
 */
export const DEFAULT_MCP_REDIRECT_URL = "http://127.0.0.1:33418/arbor/oauth/callback";

/** The `oauth` block of an HTTP server's config. */
export interface McpOAuthSettings {
  /** `authorization_code` (a user consents once; default) or `client_credentials` (no user). */
  grant?: "authorization_code" | "client_credentials";
  /** A pre-registered client; without it the client registers dynamically. */
  clientId?: string;
  clientSecret?: string;
  /** Scopes to ask for, space-separated (default: what the server's metadata lists). */
  scope?: string;
  /** Where the browser goes after consent (default {@link DEFAULT_MCP_REDIRECT_URL}). */
  redirectUrl?: string;
  /** The client name shown on the consent page (default `Arbor`). */
  clientName?: string;
}

/** The SDK's `OAuthClientProvider` for one server and tenant (see the module contract). */
export class McpOAuthProvider implements OAuthClientProvider {
  /** Set when the SDK asked for a browser consent during this provider's life. */
  authorizationUrl?: URL;

  constructor(
    readonly server: { name: string; url: string },
    private readonly settings: McpOAuthSettings,
    private readonly store: McpAuthStore,
    readonly tenant: string,
  ) {}

  private get interactive(): boolean {
    return (this.settings.grant ?? "authorization_code") === "authorization_code";
  }

  private record(): Promise<McpAuthRecord> {
    return this.store.get(this.tenant, this.server.url).then((record) => record ?? {});
  }

  private change(update: (record: McpAuthRecord) => McpAuthRecord | undefined): Promise<void> {
    return this.store.update(this.tenant, this.server.url, update);
  }

  get redirectUrl(): string | undefined {
    return this.interactive ? (this.settings.redirectUrl ?? DEFAULT_MCP_REDIRECT_URL) : undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    const secret = this.settings.clientSecret !== undefined;
    return {
      client_name: this.settings.clientName ?? "Arbor",
      redirect_uris: this.interactive ? [this.redirectUrl!] : [],
      grant_types: this.interactive ? ["authorization_code", "refresh_token"] : ["client_credentials"],
      response_types: this.interactive ? ["code"] : [],
      token_endpoint_auth_method: secret ? "client_secret_basic" : "none",
      ...(this.settings.scope ? { scope: this.settings.scope } : {}),
    };
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    if (this.settings.clientId !== undefined) {
      return { client_id: this.settings.clientId, ...(this.settings.clientSecret !== undefined ? { client_secret: this.settings.clientSecret } : {}) };
    }
    return (await this.record()).client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    await this.change((record) => ({ ...record, client }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.record()).tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.change(({ codeVerifier: _verifier, authorizationUrl: _url, ...record }) => ({ ...record, tokens, savedAt: Date.now() }));
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrl = authorizationUrl;
    await this.change((record) => ({ ...record, authorizationUrl: authorizationUrl.href }));
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.change((record) => ({ ...record, codeVerifier }));
  }

  async codeVerifier(): Promise<string> {
    const { codeVerifier } = await this.record();
    if (codeVerifier === undefined) throw new Error(`no authorization of MCP server "${this.server.name}" is in progress for tenant "${this.tenant}" (no PKCE verifier stored)`);
    return codeVerifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.interactive) return undefined;
    const params = new URLSearchParams({ grant_type: "client_credentials" });
    if (scope ?? this.settings.scope) params.set("scope", (scope ?? this.settings.scope)!);
    return params;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    await this.change((record) => {
      if (scope === "all") return undefined;
      const next = { ...record };
      if (scope === "client") delete next.client;
      if (scope === "tokens") delete next.tokens;
      if (scope === "verifier") delete next.codeVerifier;
      if (scope === "discovery") delete next.discovery;
      return next;
    });
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.change((record) => ({ ...record, discovery: JSON.parse(JSON.stringify(state)) as Record<string, unknown> }));
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.record()).discovery as OAuthDiscoveryState | undefined;
  }
}

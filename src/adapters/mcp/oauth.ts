/**
 * OAuth for remote MCP servers: the tenant and store a connection uses, {@link authorizeMcpServer} (runs the flow now; throws
 * `McpAuthRequiredError` with `details.authorizationUrl` when a person must consent) and {@link finishMcpAuthorization} (exchanges the code brought
 * back). A config without `oauth` is refused with `McpConfigError`.
 */
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import type { McpHttpServerConfig } from "./config.ts";
import { McpAuthRequiredError, McpConfigError } from "./errors.ts";
import { McpOAuthProvider } from "./oauth-provider.ts";
import type { McpAuthStore } from "./oauth-store.ts";
import { createMemoryMcpAuthStore } from "./oauth-store.ts";

/** Whose tokens a connection uses, and where they are kept. */
export interface McpAuthOptions {
  /** The store of tokens (default: in memory, lost with the process). */
  store?: McpAuthStore;
  /** The tenant whose tokens are used and saved (default `"default"`). Never shared with another tenant. */
  tenant?: string;
}

/** The tenant of `options`. */
export function tenantOf(options: McpAuthOptions | undefined): string {
  return options?.tenant ?? "default";
}

/** A provider for `config` (which has `oauth`), in `options`' tenant and store. */
export function oauthProviderFor(config: McpHttpServerConfig, options: McpAuthOptions | undefined, fallback: McpAuthStore): McpOAuthProvider {
  if (!config.oauth) throw new McpConfigError(`MCP server "${config.name}" has no oauth settings; add "oauth": {} to its config to use OAuth.`);
  return new McpOAuthProvider({ name: config.name, url: config.url }, config.oauth, options?.store ?? fallback, tenantOf(options));
}

/** The error saying a person must consent (see `McpAuthRequiredError`). */
export function authRequired(provider: McpOAuthProvider, tool?: string, cause?: unknown): McpAuthRequiredError {
  const url = provider.authorizationUrl?.href;
  const what = tool === undefined ? "" : ` to run tool "${tool}"`;
  return new McpAuthRequiredError(
    url
      ? `MCP server "${provider.server.name}" needs your consent${what} (tenant "${provider.tenant}"): open ${url} and then finish with the code the redirect carries.`
      : `MCP server "${provider.server.name}" refused the stored credentials${what} (tenant "${provider.tenant}") and asked for no consent page.`,
    { ...(cause === undefined ? {} : { cause }), details: { server: provider.server.name, tenant: provider.tenant, ...(url ? { authorizationUrl: url } : {}), ...(tool === undefined ? {} : { tool }) } },
  );
}

/** True when `error` (or the provider's state) says a consent is needed. */
export function needsConsent(provider: McpOAuthProvider | undefined, error: unknown): boolean {
  return provider !== undefined && (provider.authorizationUrl !== undefined || error instanceof UnauthorizedError);
}

/**
 * Authorizes now (see the module contract); resolves once a token is stored.
 * @throws McpAuthRequiredError with `details.authorizationUrl` when a person must consent; McpConfigError without `oauth`.
 * @example
 * await authorizeMcpServer({ name: "docs", transport: "http", url, oauth: {} }, { store, tenant: "acme" });
 */
export async function authorizeMcpServer(config: McpHttpServerConfig, options: McpAuthOptions = {}): Promise<void> {
  const provider = oauthProviderFor(config, options, createMemoryMcpAuthStore());
  const result = await auth(provider, { serverUrl: config.url });
  if (result !== "AUTHORIZED") throw authRequired(provider);
}

/**
 * Finishes a consent: exchanges `codeOrRedirectUrl` (the `code`, or the URL the browser was
 * sent to, whose `code` query parameter is read) for tokens, stored for the tenant.
 * @throws McpAuthRequiredError when the URL carries an `error`, or the server refuses the code; McpConfigError without `oauth`.
 * @example
 * await finishMcpAuthorization(config, "http://127.0.0.1:33418/arbor/oauth/callback?code=abc", { store, tenant: "acme" });
 */
export async function finishMcpAuthorization(config: McpHttpServerConfig, codeOrRedirectUrl: string, options: McpAuthOptions = {}): Promise<void> {
  const provider = oauthProviderFor(config, options, createMemoryMcpAuthStore());
  let code = codeOrRedirectUrl.trim();
  if (/^https?:\/\//i.test(code)) {
    const url = new URL(code);
    const refused = url.searchParams.get("error");
    if (refused) throw authRequired(provider, undefined, new Error(`the authorization server answered ${refused}: ${url.searchParams.get("error_description") ?? ""}`));
    code = url.searchParams.get("code") ?? "";
  }
  if (!code) throw new McpConfigError(`No authorization code given for MCP server "${config.name}": pass the code, or the whole URL the browser was sent to.`);
  try {
    const result = await auth(provider, { serverUrl: config.url, authorizationCode: code });
    if (result !== "AUTHORIZED") throw authRequired(provider);
  } catch (error) {
    if (McpAuthRequiredError.isInstance(error)) throw error;
    throw new McpAuthRequiredError(`MCP server "${config.name}" refused the authorization code (tenant "${provider.tenant}"): ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      details: { server: config.name, tenant: provider.tenant },
    });
  }
}

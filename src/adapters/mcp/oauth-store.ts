/**
 * Where MCP OAuth state is kept (tokens, client registration, PKCE verifier, discovery), keyed by `(tenant, server URL)` so tenants never share
 * tokens. The file store keeps one 0600 JSON file per tenant, replaced by rename; a file that is not a store's is refused with `McpConfigError`,
 * never overwritten; updates are serialised within a process.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { McpConfigError } from "./errors.ts";
import { ignoreError } from "../../core/ignored.ts";

/** What is stored for one tenant and one server URL. Plain JSON. */
export interface McpAuthRecord {
  /** The tokens, as the authorization server issued them. */
  tokens?: OAuthTokens;
  /** When the tokens were saved (epoch ms); with `tokens.expires_in` it tells when they expire. */
  savedAt?: number;
  /** The client registration (dynamic or pre-registered). */
  client?: OAuthClientInformationMixed;
  /** The PKCE verifier of the consent in progress. */
  codeVerifier?: string;
  /** The authorization URL of the consent in progress. */
  authorizationUrl?: string;
  /** The SDK's discovery state (authorization server and resource metadata). */
  discovery?: Record<string, unknown>;
}

/**
 * A store of {@link McpAuthRecord}s by tenant and server URL (see the module contract).
 * @example
 * await store.update("acme", url, (record) => ({ ...record, tokens: undefined }));
 */
export interface McpAuthStore {
  get(tenant: string, serverUrl: string): Promise<McpAuthRecord | undefined>;
  /** Reads the record (or `{}`), replaces it with `change`'s result; `undefined` deletes it. */
  update(tenant: string, serverUrl: string, change: (record: McpAuthRecord) => McpAuthRecord | undefined): Promise<void>;
}

/**
 * A store that lives in memory (one process; lost on exit).
 * @example
 * const store = createMemoryMcpAuthStore();
 */
export function createMemoryMcpAuthStore(): McpAuthStore {
  const records = new Map<string, McpAuthRecord>();
  const key = (tenant: string, url: string) => JSON.stringify([tenant, url]);
  return {
    async get(tenant, serverUrl) {
      const record = records.get(key(tenant, serverUrl));
      return record && structuredClone(record);
    },
    async update(tenant, serverUrl, change) {
      const current = records.get(key(tenant, serverUrl)) ?? {};
      const next = change(structuredClone(current));
      if (next === undefined) records.delete(key(tenant, serverUrl));
      else records.set(key(tenant, serverUrl), structuredClone(next));
    },
  };
}

interface TenantFile {
  format: "arbor-mcp-auth-1";
  tenant: string;
  servers: Record<string, McpAuthRecord>;
}

/** The file name of a tenant's records (no path): 32 hex characters of the SHA-256 of its name. */
export function tenantFileName(tenant: string): string {
  return `${createHash("sha256").update(tenant).digest("hex").slice(0, 32)}.json`;
}

/**
 * A store of one JSON file per tenant in `dir` (see the module contract). The folder is made on the first write.
 * @throws McpConfigError (on read) when a tenant's file is not a store file, or names another tenant.
 * @example
 * const store = createFileMcpAuthStore(".arbor/mcp-auth");
 */
export function createFileMcpAuthStore(dir: string): McpAuthStore {
  let queue: Promise<unknown> = Promise.resolve();
  const read = (tenant: string): TenantFile => {
    const path = join(dir, tenantFileName(tenant));
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { format: "arbor-mcp-auth-1", tenant, servers: {} };
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new McpConfigError(`MCP auth store file ${path} is not JSON (${(error as Error).message}); move it away to start over.`, { cause: error });
    }
    const file = parsed as Partial<TenantFile>;
    if (file?.format !== "arbor-mcp-auth-1" || typeof file.servers !== "object" || file.servers === null) {
      throw new McpConfigError(`MCP auth store file ${path} is not an Arbor MCP auth store file (format "arbor-mcp-auth-1"); it was left as it is.`);
    }
    if (file.tenant !== tenant) throw new McpConfigError(`MCP auth store file ${path} belongs to another tenant; it was left as it is.`);
    return file as TenantFile;
  };
  return {
    async get(tenant, serverUrl) {
      await queue;
      return read(tenant).servers[serverUrl];
    },
    update(tenant, serverUrl, change) {
      const run = queue.then(() => {
        const file = read(tenant);
        const next = change(structuredClone(file.servers[serverUrl] ?? {}));
        if (next === undefined) delete file.servers[serverUrl];
        else file.servers[serverUrl] = next;
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const path = join(dir, tenantFileName(tenant));
        const temporary = `${path}.${randomUUID()}.tmp`;
        writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
        renameSync(temporary, path);
      });
      // A failed update fails its caller only; the next update starts from the file.
      queue = run.catch(ignoreError("a failed token-file update rejects its own caller; the queue goes on"));
      return run;
    },
  };
}

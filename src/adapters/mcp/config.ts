/**
 * MCP server configurations and their validation: names of `[A-Za-z0-9_-]{1,32}`, unique; stdio servers get only the SDK's safe environment plus
 * `env`; http servers may use OAuth; `replay` is the replay policy of the server's tools (default from `readOnlyHint`/`idempotentHint`).
 * {@link parseMcpServerConfigs} throws `McpConfigError` naming the first bad field, before anything starts.
 */
import { z } from "zod";
import { McpConfigError } from "./errors.ts";

const name = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, "must be 1-32 characters of A-Z, a-z, 0-9, _ or - (it prefixes tool names)");
const callTimeoutMs = z.number().int().positive().optional();
const replay = z.enum(["safe", "unsafe"]).optional();

const stdioSchema = z.strictObject({
  name,
  transport: z.literal("stdio"),
  command: z.string().min(1, "must name the program to run"),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  callTimeoutMs,
  replay,
});

const oauthSchema = z.strictObject({
  grant: z.enum(["authorization_code", "client_credentials"]).optional(),
  clientId: z.string().min(1).optional(),
  clientSecret: z.string().min(1).optional(),
  scope: z.string().min(1).optional(),
  redirectUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
  clientName: z.string().min(1).optional(),
});

const httpSchema = z
  .strictObject({
    name,
    transport: z.literal("http"),
    url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
    headers: z.record(z.string(), z.string()).optional(),
    oauth: oauthSchema.optional(),
    callTimeoutMs,
    replay,
  })
  .refine((config) => config.oauth?.grant !== "client_credentials" || config.oauth.clientId !== undefined, {
    path: ["oauth", "clientId"],
    message: "the client_credentials grant needs a pre-registered clientId (and clientSecret)",
  });

const serversSchema = z.array(z.discriminatedUnion("transport", [stdioSchema, httpSchema]));

/** A server started as a child process speaking MCP over stdin/stdout. */
export type McpStdioServerConfig = z.infer<typeof stdioSchema>;
/** A server reached over MCP Streamable HTTP. */
export type McpHttpServerConfig = z.infer<typeof httpSchema>;
/** One MCP server to connect to. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/**
 * Validates server configurations.
 * @throws McpConfigError (code `MCP_CONFIG_INVALID`) naming the first bad field, or a duplicate server name.
 * @example
 * parseMcpServerConfigs([{ name: "fs", transport: "stdio", command: "mcp-fs" }]);
 */
export function parseMcpServerConfigs(configs: unknown): McpServerConfig[] {
  const result = serversSchema.safeParse(configs);
  if (!result.success) {
    const message = result.error.issues
      .map((issue) => `servers${issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")}: ${issue.message}`)
      .join("; ");
    throw new McpConfigError(`Invalid MCP server configuration: ${message}`, { details: { issues: result.error.issues } });
  }
  const seen = new Set<string>();
  result.data.forEach((config, index) => {
    if (seen.has(config.name)) {
      throw new McpConfigError(`Invalid MCP server configuration: servers[${index}].name: "${config.name}" is used by an earlier server`);
    }
    seen.add(config.name);
  });
  return result.data;
}

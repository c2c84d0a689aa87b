/**
 * MCP server configurations and their validation.
 *
 * Contract (ours; the shapes are the seed's):
 * - `name`: 1–32 characters of `[A-Za-z0-9_-]`, unique among the servers; it
 *   prefixes every tool name (`name__tool`, see `tool-names.ts`);
 * - stdio: `command` (no shell), `args`, `env` (added to the SDK's safe
 *   default set: HOME, LOGNAME, PATH, SHELL, TERM, USER; the rest of the
 *   parent's environment is **not** inherited), `cwd`;
 * - http (Streamable HTTP): an `http:` or `https:` `url`, and `headers` sent
 *   with every request (never logged by Arbor);
 * - `callTimeoutMs` overrides the per-call timeout for one server (ms, > 0);
 * - {@link parseMcpServerConfigs} throws `McpConfigError` naming the first bad
 *   field (e.g. `servers[0].command: ...`); nothing is started then.
 *
 * @example
 * ```ts
 * const configs: McpServerConfig[] = [
 *   { name: "everything", transport: "stdio", command: "node", args: ["server.js", "stdio"] },
 *   { name: "docs", transport: "http", url: "http://127.0.0.1:3001/mcp", headers: { authorization: "Bearer ..." } },
 * ];
 * ```
 */
import { z } from "zod";
import { McpConfigError } from "./errors.ts";

const name = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, "must be 1-32 characters of A-Z, a-z, 0-9, _ or - (it prefixes tool names)");
const callTimeoutMs = z.number().int().positive().optional();

const stdioSchema = z.strictObject({
  name,
  transport: z.literal("stdio"),
  command: z.string().min(1, "must name the program to run"),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  callTimeoutMs,
});

const httpSchema = z.strictObject({
  name,
  transport: z.literal("http"),
  url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
  headers: z.record(z.string(), z.string()).optional(),
  callTimeoutMs,
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
 *
 * @throws McpConfigError (code `MCP_CONFIG_INVALID`) naming the first bad field, or a duplicate server name.
 * @example
 * ```ts
 * parseMcpServerConfigs([{ name: "fs", transport: "stdio", command: "mcp-fs" }]);
 * ```
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

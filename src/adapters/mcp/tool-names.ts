/**
 * Arbor names for MCP tools.
 *
 * Contract (ours): the name the model sees is `<server>__<tool>` (two
 * underscores), so tools of different servers never collide and the server is
 * visible to the model. Characters outside `[A-Za-z0-9_-]` (MCP allows `.`
 * and `/` in tool names; model APIs do not) become `_`. A result longer than
 * 64 characters (OpenAI's limit) is cut to 55 and suffixed with `_` and 8 hex
 * digits of the SHA-256 of `<server>__<original tool name>`, so it stays unique
 * and stable across runs. Deterministic and pure.
 *
 * @example
 * ```ts
 * mcpToolName("everything", "get-sum"); // "everything__get-sum"
 * mcpToolName("docs", "search.v2");    // "docs__search_v2"
 * ```
 */
import { createHash } from "node:crypto";

/**
 * Longest tool name most model APIs accept, in characters.
 *
 * @example
 * ```ts
 * const fits = (name: string) => name.length <= MAX_TOOL_NAME_LENGTH; // 64
 * ```
 */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * The Arbor tool name of MCP tool `tool` on server `server`.
 *
 * @param server the configured server name (already `[A-Za-z0-9_-]`)
 * @param tool the tool's name as the server lists it
 * @returns a name matching `^[A-Za-z0-9_-]{1,64}$`
 * @example
 * ```ts
 * mcpToolName("a", "x".repeat(80)).length; // 64
 * ```
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${server}__${tool}`;
  const safe = full.replace(/[^A-Za-z0-9_-]/g, "_");
  if (safe.length <= MAX_TOOL_NAME_LENGTH) return safe;
  const hash = createHash("sha256").update(full).digest("hex").slice(0, 8);
  return `${safe.slice(0, MAX_TOOL_NAME_LENGTH - 9)}_${hash}`;
}

/**
 * Arbor names for MCP tools: `<server>__<tool>`, characters outside `[A-Za-z0-9_-]` become `_`, and a name over 64 characters is cut to 55 plus `_`
 * and 8 hex digits of a SHA-256, so it stays unique and stable. Pure.
 */
import { createHash } from "node:crypto";

/**
 * Longest tool name most model APIs accept, in characters.
 * @example
 * const fits = (name: string) => name.length <= MAX_TOOL_NAME_LENGTH; // 64
 */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * The Arbor tool name of MCP tool `tool` on server `server`.
 * @param server the configured server name (already `[A-Za-z0-9_-]`)
 * @param tool the tool's name as the server lists it
 * @returns a name matching `^[A-Za-z0-9_-]{1,64}$`
 * @example
 * mcpToolName("a", "x".repeat(80)).length; // 64
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `${server}__${tool}`;
  const safe = full.replace(/[^A-Za-z0-9_-]/g, "_");
  if (safe.length <= MAX_TOOL_NAME_LENGTH) return safe;
  const hash = createHash("sha256").update(full).digest("hex").slice(0, 8);
  return `${safe.slice(0, MAX_TOOL_NAME_LENGTH - 9)}_${hash}`;
}

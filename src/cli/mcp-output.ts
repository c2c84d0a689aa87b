/**
 * What the CLI prints about MCP servers: one stderr line per diagnostic (with the `arbor mcp login` command for consent), requests for input with
 * the `arbor answer` commands that answer them from any shell, and where tokens live (`$ARBOR_MCP_AUTH_DIR`, else `~/.arbor/mcp-auth`).
 * {@link askElicitationOnTerminal} also asks on a terminal.
 */
import { homedir } from "node:os";
import { createInterface } from "node:readline/promises";
import { join } from "node:path";
import type { McpDiagnostic } from "../adapters/mcp/types.ts";
import type { ElicitationAnswer, ElicitationRecord } from "../harness/elicitations.ts";
import { ignored } from "../core/ignored.ts";

/** The folder of the CLI's MCP OAuth tokens. */
export function mcpAuthDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ARBOR_MCP_AUTH_DIR || join(homedir(), ".arbor", "mcp-auth");
}

/** One line for a diagnostic. */
export function mcpDiagnosticLine(problem: McpDiagnostic): string {
  const line = `mcp ${problem.server}: ${problem.message}`;
  return problem.code === "auth-required" && problem.authorizationUrl
    ? `${line}\n  after consenting in the browser, run: arbor mcp login ${problem.server} '<the URL the browser was sent to>' (or arbor mcp login ${problem.server} to get a new link)`
    : line;
}

/** Prints a request for input and how to answer it (stderr). */
export function printElicitation(record: ElicitationRecord): void {
  const properties = (record.requestedSchema.properties ?? {}) as Record<string, { type?: string; description?: string }>;
  const required = new Set((record.requestedSchema.required as string[] | undefined) ?? []);
  const fields = Object.entries(properties).map(([name, field]) => `  ${name}${required.has(name) ? "" : "?"} (${field.type ?? "any"})${field.description ? `: ${field.description}` : ""}`);
  process.stderr.write(
    [
      `MCP server "${record.server}" asks${record.toolName ? ` (tool ${record.toolName})` : ""}: ${record.message}`,
      ...fields,
      `answer from any shell: arbor answer ${record.sessionId} ${record.elicitationId} --accept '<JSON object>'   (or --decline, --cancel)`,
      "",
    ].join("\n"),
  );
}

/** Asks on the terminal for one request (see the module contract); `undefined` leaves it to others. */
export async function askElicitationOnTerminal(record: ElicitationRecord, signal: AbortSignal): Promise<ElicitationAnswer | undefined> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const line = (await rl.question("your answer (a JSON object, decline, cancel; empty: answer elsewhere): ", { signal })).trim();
      if (line === "") return undefined;
      if (/^(d|decline)$/i.test(line)) return { action: "decline" };
      if (/^(c|cancel)$/i.test(line)) return { action: "cancel" };
      try {
        const content: unknown = JSON.parse(line);
        if (content && typeof content === "object" && !Array.isArray(content)) return { action: "accept", content: content as Record<string, string> };
      } catch (error) {
        ignored("an answer that is not JSON is asked again", error);
      }
      process.stderr.write(`not a JSON object of the fields asked for (e.g. {"name":"Ada"}), nor decline or cancel; ${record.elicitationId} still waits.\n`);
    }
  } catch (error) {
    if (signal.aborted) return undefined;
    throw error;
  } finally {
    rl.close();
  }
}

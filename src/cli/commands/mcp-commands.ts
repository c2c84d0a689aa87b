/**
 * `arbor elicitations [session]`, `answer <session> <id>` (`--accept '<JSON>'`, `--decline` or `--cancel`) and `mcp login <server> [redirect]`
 * (bodies in `mcp-actions.ts`, lazy): the human side of MCP requests for input and OAuth consent. A repeated answer prints "unchanged"; an invalid
 * or conflicting one exits 1 with nothing written; a dead asker's call gets the answer on `arbor resume`.
 */
import type { Command } from "commander";

const loadActions = async () => import("./mcp-actions.ts");

/** Registers `elicitations`, `answer` and `mcp login` on `program`. */
export function registerMcpCommands(program: Command, globals: () => { db?: string; tenant?: string }): void {
  program
    .command("elicitations")
    .description("List the MCP servers' requests for input that wait for an answer (docs/mcp.md)")
    .argument("[session]", "session id, unique prefix, or latest (default: every session)")
    .option("--all", "also list the answered ones")
    .option("--json", "one JSON object per line")
    .action(async (reference: string | undefined, flags: { json?: boolean; all?: boolean }) => {
      const { elicitationsAction } = await loadActions();
      await elicitationsAction(reference, flags, globals());
    });
  program
    .command("answer")
    .description("Answer an MCP server's request for input; the run that asked goes on (or: arbor resume <session>)")
    .argument("<session>", "session id, unique prefix, or latest")
    .argument("<elicitationId>", "the request's id (see arbor elicitations)")
    .option("--accept <json>", "accept, with the values as a JSON object")
    .option("--decline", "decline to give the information")
    .option("--cancel", "dismiss the request")
    .action(async (reference: string, elicitationId: string, flags: { accept?: string; decline?: boolean; cancel?: boolean }) => {
      const { answerAction } = await loadActions();
      await answerAction(reference, elicitationId, flags, globals());
    });
  program
    .command("mcp")
    .description("MCP servers (see --mcp and .arbor/mcp.json)")
    .command("login")
    .description("OAuth consent for an MCP server: prints the link; with the URL the browser was sent to, stores the tokens")
    .argument("<server>", "the server's name in --mcp or .arbor/mcp.json")
    .argument("[redirect]", "the URL the browser was sent to after consent (or just its code)")
    .option("--mcp <name=command|url>", "a server not in .arbor/mcp.json (repeatable)", (value: string, previous: string[] = []) => [...previous, value])
    .option("--cwd <dir>", "the folder whose .arbor/mcp.json lists the server (default: the current one)")
    .action(async (server: string, redirect: string | undefined, flags: { mcp?: string[]; cwd?: string }) => {
      const { loginAction } = await loadActions();
      await loginAction(server, redirect, flags, globals());
    });
}

/** The bodies of `elicitations`, `answer` and `mcp login` (contract: `mcp-commands.ts`). */
import { McpAuthRequiredError } from "../../adapters/mcp/errors.ts";
import { authorizeMcpServer, finishMcpAuthorization } from "../../adapters/mcp/oauth.ts";
import { createFileMcpAuthStore } from "../../adapters/mcp/oauth-store.ts";
import { answerElicitation, ElicitationAnswerInvalidError, ElicitationConflictError, ElicitationNotFoundError, listElicitations, type ElicitationAnswer } from "../../harness/elicitations.ts";
import { CliError, rethrowRefusal } from "../cli-error.ts";
import { resolveMcpServers } from "../mcp-config.ts";
import { mcpAuthDir } from "../mcp-output.ts";
import { withStore, type StoreFlags } from "../store-context.ts";

/** `arbor elicitations [session]`. */
export async function elicitationsAction(reference: string | undefined, flags: { json?: boolean; all?: boolean }, globals: StoreFlags): Promise<void> {
  await withStore(globals, { mustExist: true }, async (store) => {
    const ids = reference ? [await store.resolveSessionId(reference)] : (await store.listOpenable()).map((session) => session.id);
    let printed = 0;
    for (const id of ids) {
      for (const record of await listElicitations(store.log, id)) {
        if (record.status !== "pending" && !flags.all) continue;
        printed += 1;
        process.stdout.write(`${flags.json ? JSON.stringify(record) : `${id} ${record.elicitationId} ${record.server} ${record.status} ${JSON.stringify(record.message)}`}\n`);
      }
    }
    if (printed === 0 && !flags.json) process.stdout.write("No MCP server waits for an answer.\n");
  });
}

function answerOf(flags: { accept?: string; decline?: boolean; cancel?: boolean }): ElicitationAnswer {
  const given = [flags.accept !== undefined, flags.decline === true, flags.cancel === true].filter(Boolean).length;
  if (given !== 1) throw new CliError("Give exactly one of --accept '<JSON object>', --decline or --cancel.");
  if (flags.decline) return { action: "decline" };
  if (flags.cancel) return { action: "cancel" };
  let content: unknown;
  try {
    content = JSON.parse(flags.accept!);
  } catch (error) {
    throw new CliError(`--accept is not JSON: ${(error as Error).message}`);
  }
  if (!content || typeof content !== "object" || Array.isArray(content)) throw new CliError(`--accept must be a JSON object of the fields asked for, e.g. --accept '{"name":"Ada"}'.`);
  return { action: "accept", content: content as Record<string, string> };
}

/** `arbor answer <session> <elicitationId>`. */
export async function answerAction(reference: string, elicitationId: string, flags: { accept?: string; decline?: boolean; cancel?: boolean }, globals: StoreFlags): Promise<void> {
  const answer = answerOf(flags);
  await withStore(globals, { mustExist: true }, async (store) => {
    const sessionId = await store.resolveSessionId(reference);
    try {
      const { changed } = await answerElicitation(store.log, sessionId, elicitationId, answer, "cli");
      process.stdout.write(`${elicitationId} ${answer.action}${changed ? "" : " (unchanged: already recorded)"}\n`);
      process.stderr.write(`the process that asked goes on if it still runs; if it stopped, go on with: arbor resume ${sessionId}\n`);
    } catch (error) {
      rethrowRefusal(error, [ElicitationNotFoundError, ElicitationConflictError, ElicitationAnswerInvalidError]);
    }
  });
}

/** `arbor mcp login <server> [redirect]`. */
export async function loginAction(name: string, redirect: string | undefined, flags: { mcp?: string[]; cwd?: string }, globals: StoreFlags): Promise<void> {
  const server = resolveMcpServers(flags.mcp ?? [], flags.cwd ?? process.cwd()).find((item) => item.name === name);
  if (!server) throw new CliError(`No MCP server "${name}" in --mcp or .arbor/mcp.json.`);
  if (server.transport !== "http" || !server.oauth) throw new CliError(`MCP server "${name}" does not use OAuth: give it "oauth": {} in .arbor/mcp.json.`);
  const auth = { store: createFileMcpAuthStore(mcpAuthDir()), tenant: globals.tenant ?? process.env.ARBOR_TENANT ?? "default" };
  try {
    if (redirect === undefined) await authorizeMcpServer(server, auth);
    else await finishMcpAuthorization(server, redirect, auth);
    process.stdout.write(`MCP server "${name}" is authorized for tenant "${auth.tenant}".\n`);
  } catch (error) {
    if (!McpAuthRequiredError.isInstance(error)) throw error;
    const url = error.details.authorizationUrl as string | undefined;
    if (url) process.stdout.write(`${url}\n`);
    throw new CliError(url ? `Open the link above, consent, then run: arbor mcp login ${name} '<the URL the browser was sent to>'` : error.message, 1);
  }
}

/**
 * The body of `arbor serve` (registered in `serve.ts`).
 *
 * Contract (ours):
 * - the token is `--token` or `ARBOR_TOKEN`; requests that carry it are the tenant of the global
 *   `--tenant` (or `ARBOR_TENANT`, default `default`) and see only that tenant's sessions; a host that is not loopback (`127.0.0.0/8`, `::1`,
 *   `localhost`) without a token is refused before anything is opened (exit 2);
 * - with a model (`--model` or `ARBOR_MODEL`) prompts run with the CLI's harness (coding tools
 *   bound to `--cwd`, the key redacted from the log), made on the first request that needs it
 *   with that request's session as its own (no session is created at start); sessions unused
 *   for 10 minutes are closed and reopened from the log on the next request (the handler's
 *   `idleSessionMs`); the agents' machine states are recorded
 *   (`createMachineStates`) for the inspector's live view; `--approve <tool>` (repeatable, or
 *   `all`) makes those tools' calls wait for a decision, as in `arbor run`; with a model it also runs a
 *   worker of the fleet (`worker-action.ts`: background and scheduled prompts); without a model the service is read-only
 *   (sessions, events, resume and the inspector; `POST` answers 501);
 * - prints one line `arbor serve: http://HOST:PORT ...` on stderr once it listens; SIGINT or
 *   SIGTERM close the server, abort runs cleanly and close the log, then the command returns.
 *
 * @example
 * ```ts
 * await serveAction({ port: "0", host: "127.0.0.1" }, { db: "arbor.db" });
 * ```
 */
import { existsSync } from "node:fs";
import { isIP } from "node:net";
import { createChatHandler, type ChatHandler } from "../../http/chat-handler.ts";
import { startChatServer } from "../../http/node-adapter.ts";
import { createMachineStates } from "../../machines/machine-states.ts";
import type { AgentHarness } from "../../harness/create-harness.ts";
import { createCliHarness } from "../agent-setup.ts";
import { approvalFlag } from "./model-actions.ts";
import { startCliWorker, untilStopSignal } from "./worker-action.ts";
import { CliError } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets } from "../config.ts";
import { openStore } from "../store-context.ts";
import type { ServeFlags } from "./serve.ts";

/** True for loopback hosts. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1";
  return false;
}

/** `arbor serve`. */
export async function serveAction(flags: ServeFlags, globals: { db?: string; tenant?: string }): Promise<void> {
  const host = flags.host ?? "127.0.0.1";
  const port = Number(flags.port ?? "3000");
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`Bad --port "${flags.port}": expected a number from 0 to 65535.`);
  // An empty ARBOR_TOKEN (or --token "") is no token, not a token nobody can send.
  const token = (flags.token ?? process.env.ARBOR_TOKEN) || undefined;
  if (!token && !isLoopbackHost(host)) {
    throw new CliError(`Refusing to serve on ${host} without a token: anyone who can reach it could run the agent. Pass --token or set ARBOR_TOKEN (or bind 127.0.0.1).`);
  }
  // The server checks each request's tenant itself (src/http/auth.ts), so it sees every tenant;
  // token-authenticated requests are the tenant of `--tenant` / ARBOR_TENANT.
  const tenant = globals.tenant ?? process.env.ARBOR_TENANT ?? "default";
  const store = openStore(globals, { allTenants: true });
  let close: (() => Promise<void>) | undefined;
  try {
    const cwd = flags.cwd ?? process.cwd();
    let handler: ChatHandler;
    let mode: string;
    if (flags.model ?? process.env.ARBOR_MODEL) {
      const settings = resolveModelSettings(flags, process.env);
      if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
      store.addSecrets(settingsSecrets(settings));
      // Checked now, not at the first request (createCliHarness checks it too).
      if (!existsSync(cwd)) throw new CliError(`--cwd "${cwd}" does not exist.`);
      // The live machine states of the inspector: recorded from the agents' inspection events.
      const machineStates = createMachineStates();
      const requireApproval = approvalFlag(flags.approve);
      // The harness is made on the first request that needs one, with that request's session as
      // its own: no empty session is created at start. The handler calls this once at a time, and
      // again only after the last one rejected or was closed by the handler because its own
      // session went idle (session-pool.ts): only the latest can be open at shutdown.
      let latest: Promise<AgentHarness> | undefined;
      const openHarness = (sessionId: string) =>
        (latest = createCliHarness({ store, sessionId, cwd, settings, tools: flags, inspect: machineStates, ...(requireApproval ? { requireApproval } : {}) }).then((made) => made.harness));
      handler = createChatHandler({ repository: store.repo, openHarness, token, tenant, cwd, machineStates });
      mode = `model ${settings.spec.provider}:${settings.spec.modelId}`;
      // Every serve is also a worker of the fleet: background and scheduled prompts run here too.
      // Orphaned runs are left to `arbor worker` processes: this process's HTTP harness recovers the
      // sessions it opens, and the pid ownership check cannot tell its run from the worker's.
      const worker = startCliWorker({ store, settings, cwd, tools: flags, continueRuns: false, ...(requireApproval ? { requireApproval } : {}) });
      mode += `; worker ${worker.id}`;
      close = async () => {
        await worker.close();
        // Idempotent: a harness the handler closed already is a no-op.
        await (await latest?.catch(() => undefined))?.close();
      };
    } else {
      handler = createChatHandler({ repository: store.repo, token, tenant, cwd });
      mode = "read-only (no --model)";
    }
    const server = await startChatServer({ handler, port, host });
    process.stderr.write(`arbor serve: ${server.url} (${mode}; ${token ? "bearer token required" : "no token: loopback only"}; log ${store.dbPath})\n`);
    await untilStopSignal();
    await server.close();
  } finally {
    await close?.();
    await store.close();
  }
}

/**
 * The body of `arbor serve`: the token (`--token`, `ARBOR_TOKEN`) maps requests to the `--tenant`; a non-loopback host without a token is refused
 * (exit 2). With a model, prompts run with the CLI's harness (made on first need, idle sessions closed after 10 minutes), machine states are
 * recorded and a fleet worker runs in the sessions the service opens (`--durability continue`, the default, continues dead processes' runs);
 * without one the service is read-only (`POST` answers 501). Each session works in the folder it recorded (`session-folders.ts`): `--cwd` is the
 * folder of the sessions the service creates. SIGINT/SIGTERM close everything cleanly.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { isIP } from "node:net";
import { createChatHandler, createChatService, type ChatHandler } from "../../http/chat-handler.ts";
import { startChatServer } from "../../http/node-adapter.ts";
import { createMachineStates } from "../../machines/machine-states.ts";
import type { AgentHarness } from "../../harness/create-harness.ts";
import { openServeHarness } from "../session-folders.ts";
import { approvalFlag } from "./model-actions.ts";
import { startCliWorker, untilStopSignal } from "./worker-action.ts";
import { CliError } from "../cli-error.ts";
import { resolveModelSettings, settingsSecrets } from "../config.ts";
import { openStore } from "../store-context.ts";
import { budgetFlags, wholeFlag } from "../budget-flags.ts";
import { createPostgresRunSlotStore } from "../../store/postgres/pg-run-slots.ts";
import type { ServeFlags } from "./serve.ts";
import { ignoreError } from "../../core/ignored.ts";

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
  // Checked before anything is opened: a bad value names its flag.
  const budget = budgetFlags(flags);
  const maxConcurrentRuns = wholeFlag(flags.maxConcurrentRuns, "--max-concurrent-runs", 1);
  const maxQueuedRuns = wholeFlag(flags.maxQueuedRuns, "--max-queued-runs", 0);
  if (maxQueuedRuns !== undefined && maxConcurrentRuns === undefined) throw new CliError("--max-queued-runs needs --max-concurrent-runs (the queue is of runs waiting for a slot).");
  const durability = flags.durability ?? "continue";
  if (durability !== "continue" && durability !== "interrupt") throw new CliError(`Bad --durability "${durability}": expected continue or interrupt.`);
  const store = openStore(globals, { allTenants: true });
  try {
    // Refused at start, not at the first request: a wrong key, or an encrypted store without ARBOR_ENCRYPTION_KEY.
    await store.ready();
  } catch (error) {
    await store.close();
    throw error;
  }
  // Per-tenant run slots: in PostgreSQL (advisory locks) when the log is there, so replicas share them.
  const slotStore = maxConcurrentRuns !== undefined && store.postgresUrl ? createPostgresRunSlotStore({ connectionString: store.postgresUrl }) : undefined;
  const concurrency = maxConcurrentRuns === undefined ? {} : { concurrency: { maxConcurrentRuns, ...(maxQueuedRuns !== undefined ? { maxQueuedRuns } : {}), ...(slotStore ? { store: slotStore } : {}) } };
  let close: (() => Promise<void>) | undefined;
  try {
    // The folder of the sessions this service creates (recorded absolute); a session it opens works in its own recorded folder (session-folders.ts).
    const cwd = resolve(flags.cwd ?? process.cwd());
    let handler: ChatHandler;
    let mode: string;
    if (flags.model ?? process.env.ARBOR_MODEL) {
      const settings = resolveModelSettings(flags, process.env);
      if (!settings.apiKey) throw new CliError(`No API key: set ${settings.apiKeyEnv} (or name another variable with --api-key-env).`);
      store.addSecrets(settingsSecrets(settings));
      // Checked now, not at the first request (createCliHarness checks it too).
      if (!existsSync(cwd)) throw new CliError(`--cwd "${flags.cwd ?? cwd}" does not exist.`);
      // The live machine states of the inspector: recorded from the agents' inspection events.
      const machineStates = createMachineStates();
      const requireApproval = approvalFlag(flags.approve);
      // The harness is made on the first request that needs one, with that request's session as its own: no empty session is created at start. The
      // handler calls this once at a time, and again only after the last one rejected or was closed by the handler because its own session went idle
      // (session-pool.ts): only the latest can be open at shutdown.
      let latest: Promise<AgentHarness> | undefined;
      const openHarness = (sessionId: string) =>
        (latest = openServeHarness({ store, fallbackCwd: cwd, settings, tools: flags, inspect: machineStates, durability, ...(requireApproval ? { requireApproval } : {}), ...(budget ? { budget } : {}) }, sessionId));
      const service = createChatService({ repository: store.repo, openHarness, token, tenant, cwd, machineStates, ...concurrency });
      handler = service.handler;
      mode = `model ${settings.spec.provider}:${settings.spec.modelId}; durability ${durability}`;
      // Every serve is also a worker of the fleet, in the sessions its requests use: a run the
      // worker continues is the one a request for that session streams, never a second copy.
      const worker = startCliWorker({ store, settings, cwd, tools: flags, continueRuns: durability === "continue", sessions: service.sessions, ...(requireApproval ? { requireApproval } : {}), ...(budget ? { budget } : {}) });
      mode += `; worker ${worker.id}`;
      close = async () => {
        await worker.close();
        // Idempotent: a harness the handler closed already is a no-op.
        await (await latest?.catch(ignoreError("a harness that failed to open has nothing to close")))?.close();
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
    await slotStore?.close();
    await store.close();
  }
}

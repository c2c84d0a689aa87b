/** `arbor serve`: registration; the body is in `serve-action.ts` (loaded lazily, like the other commands, so model-free commands start fast). */
import type { Command } from "commander";
import type { ModelFlags } from "../config.ts";
import type { ToolFlags } from "../tool-flags.ts";
import { withToolFlags } from "../tool-flags.ts";
import { withModelFlags } from "./model-commands.ts";

/** The flags of `arbor serve`. */
export interface ServeFlags extends ModelFlags, ToolFlags {
  port?: string;
  host?: string;
  token?: string;
  cwd?: string;
  approve?: string[];
  budget?: string;
  sessionBudget?: string;
  tenantBudget?: string;
  maxConcurrentRuns?: string;
  maxQueuedRuns?: string;
  durability?: string;
}

/** Registers `serve` on `program`. */
export function registerServeCommand(program: Command, globals: () => { db?: string; tenant?: string }): void {
  withToolFlags(withModelFlags(
    program
      .command("serve")
      .description("Serve sessions over HTTP for useChat (AI SDK UI message streams, resumable from the log) and the offline inspector page")
      .option("--port <port>", "TCP port (0 = any free port)", "3000")
      .option("--host <host>", "interface to bind; anything but loopback needs a token", "127.0.0.1")
      .option("--token <token>", "bearer token every request must carry (default: $ARBOR_TOKEN)")
      .option("--cwd <dir>", "directory of the sessions the service creates (default: the current directory); a session it continues or prompts works in the folder it recorded")
      .option("--approve <tool>", "every call of this tool waits for a decision (repeatable; all = every tool): the stream shows a tool-approval-request part and the client's approval-responded part, or arbor approve/deny, decides", (value: string, previous: string[] = []) => [...previous, value])
      .option("--budget <limits>", "limits of each run, e.g. cost=0.50,tokens=20000,tool-calls=50,turns=10,duration=10m (docs/budgets.md)")
      .option("--session-budget <limits>", "limits of each session (all its runs), same syntax")
      .option("--tenant-budget <limits>", "limits of each tenant (all its sessions, across replicas sharing the database), same syntax")
      .option("--max-concurrent-runs <n>", "runs of one tenant at once; beyond it (and the queue) 429 TOO_MANY_RUNS with Retry-After; across replicas with --db postgres://")
      .option("--max-queued-runs <n>", "runs of one tenant waiting for a slot (default 0; needs --max-concurrent-runs)")
      .option("--durability <mode>", "a run whose process died: continue = this service continues it from the log with no request (any replica); interrupt = closed as interrupted when its session is opened, as arbor run does (docs/durability.md)", "continue"),
  )).action(async (flags: ServeFlags) => {
    const { serveAction } = await import("./serve-action.ts");
    await serveAction(flags, globals());
  });
}

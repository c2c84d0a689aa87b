/**
 * `arbor serve`: registration; the body is in `serve-action.ts` (loaded lazily, like the
 * other commands, so model-free commands start fast).
 *
 * @example
 * ```sh
 * ARBOR_TOKEN=secret arbor serve --port 3000 --model openai:gpt-4o-mini
 * ```
 */
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
      .option("--cwd <dir>", "directory the coding tools work in (default: the current directory)")
      .option("--approve <tool>", "every call of this tool waits for a decision (repeatable; all = every tool): the stream shows a tool-approval-request part and the client's approval-responded part, or arbor approve/deny, decides", (value: string, previous: string[] = []) => [...previous, value]),
  )).action(async (flags: ServeFlags) => {
    const { serveAction } = await import("./serve-action.ts");
    await serveAction(flags, globals());
  });
}

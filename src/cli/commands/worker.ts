/** `arbor worker`: registration; the body is in `worker-action.ts` (loaded lazily, like the other commands). */
import type { Command } from "commander";
import type { ModelFlags } from "../config.ts";
import type { ToolFlags } from "../tool-flags.ts";
import { withToolFlags } from "../tool-flags.ts";
import { withModelFlags } from "./model-commands.ts";

/** The flags of `arbor worker`. */
export interface WorkerFlags extends ModelFlags, ToolFlags {
  cwd?: string;
  concurrency?: string;
  approve?: string[];
}

/** Registers `worker` on `program`. */
export function registerWorkerCommand(program: Command, globals: () => { db?: string; tenant?: string }): void {
  withToolFlags(withModelFlags(
    program
      .command("worker")
      .description("Run the fleet's work with no request: background and scheduled prompts (harness.start) claimed from the log that every worker and `arbor serve` shares")
      .option("--cwd <dir>", "directory of a session that recorded none (default: the current directory); every other session works in the folder it recorded")
      .option("--concurrency <n>", "tasks run at once", "4")
      .option("--approve <tool>", "every call of this tool waits for a decision (repeatable; all = every tool), as in arbor run", (value: string, previous: string[] = []) => [...previous, value]),
  )).action(async (flags: WorkerFlags) => {
    const { workerAction } = await import("./worker-action.ts");
    await workerAction(flags, globals());
  });
}

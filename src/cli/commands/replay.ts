/**
 * `arbor replay <session> [--run <id>]`: re-executes logged runs read-only with the recorded model answers and tool results (`replayRun`; body in
 * `replay-action.ts`, lazy) and prints `identical (N model calls)` (exit 0) or where a request diverges (exit 1); `--live-tools` runs the coding
 * tools again; `--json` prints the report.
 */
import type { Command } from "commander";

/** Registers `replay` on `program`; `exit` records the exit code (1 when the run diverged). */
export function registerReplayCommand(program: Command, globals: () => { db?: string; tenant?: string }, exit: { code: number }): void {
  program
    .command("replay")
    .description("Re-execute a logged run with its recorded model answers and tool results; print where the requests diverge, or identical")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--run <id>", "replay only this run (default: every run of the session)")
    .option("--json", "print the report as JSON")
    .option("--live-tools", "run the coding tools again in the session's directory (writes and commands too) instead of answering with the recorded results")
    .option("--cwd <dir>", "with --live-tools: the directory to run them in (default: the session's)")
    .action(async (reference: string, flags: { run?: string; json?: boolean; liveTools?: boolean; cwd?: string }) => {
      const { replayAction } = await import("./replay-action.ts");
      exit.code = await replayAction(reference, flags, globals());
    });
}

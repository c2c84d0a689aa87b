/**
 * `arbor replay <session> [--run <id>]`: re-executes a logged run with the model answers the log
 * recorded (`replayRun` of `arbor-agent/testing`) and prints where today's requests diverge from
 * the recorded ones, or "identical". The body is in `replay-action.ts`, loaded lazily.
 *
 * Contract (ours):
 * - the log is only read (opened read-only); the run is re-executed in a scratch in-memory
 *   session seeded with the session's branch up to the run; without `--run`, every run of the
 *   session in order (a session imported from a pi file: every user turn of its branch);
 * - tools answer with the results the log recorded for the same call ids, so nothing in the
 *   working directory runs again: the replay checks the agent loop, the context and the hooks
 *   of the installed Arbor against the log; `--live-tools` runs the coding tools again (in the
 *   session's directory, or `--cwd`), so a changed file shows as a divergent tool result;
 * - prints `identical (N model calls)` and exits 0, or `diverged: request N differs at part M:
 *   recorded "…", now "…"` and exits 1; `--json` prints the report as one JSON object;
 * - an unknown session or run, or a run that cannot be replayed (a resume after approvals),
 *   exits 1 naming why; usage errors exit 2.
 *
 * @example
 * ```sh
 * arbor replay latest
 * arbor replay 0192ab --run run-7f3a --json
 * ```
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

/**
 * The `arbor` command line (commander). `main(argv)` never throws; it returns the exit code (2 for usage and input errors; `run`: 0 done, 1 failed,
 * 130 aborted, 3 waiting for approval). Errors print one stderr line naming what to do. Without a command word the arguments are pi's (`pi-argv.ts`).
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { piArgv } from "./pi-argv.ts";
import { CliError, describeCliError } from "./cli-error.ts";
import { registerApprovalCommands } from "./commands/approval-commands.ts";
import { registerMcpCommands } from "./commands/mcp-commands.ts";
import { registerEditCommands } from "./commands/edit-commands.ts";
import { registerDoctorCommand } from "./commands/doctor.ts";
import { registerKeysCommands } from "./commands/keys.ts";
import { registerInspectCommands } from "./commands/inspect-commands.ts";
import { registerModelCommands } from "./commands/model-commands.ts";
import { registerReplayCommand } from "./commands/replay.ts";
import { registerServeCommand } from "./commands/serve.ts";
import { registerWorkerCommand } from "./commands/worker.ts";
import { registerWorkflowCommands } from "./commands/workflow-commands.ts";
import { registerWorkspaceCommands } from "./commands/workspace-commands.ts";

/** The package's version (from `src/cli/` and `dist/cli/` alike, the package root is two folders up). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

/** Builds the program; `exit` records the exit code a command asks for. */
export function buildProgram(exit: { code: number }): Command {
  const program = new Command();
  program
    .name("arbor")
    .description("Run coding agents against any OpenAI-compatible endpoint; every step lands in an event log you can branch, fork, export and resume.")
    .option("--db <path>", "event log file or postgres:// URL (default: $ARBOR_DB or .arbor/arbor.db; schema $ARBOR_DB_SCHEMA or arbor)")
    .option("--tenant <id>", "the tenant whose sessions the command sees and creates (default: $ARBOR_TENANT or default)")
    .option("--retention <policy>", "delete-deltas (default), drop-deltas or keep: delete (or empty) the stored streamed deltas of each message once it ended and was kept (the entry keeps the full text); default $ARBOR_RETENTION")
    .version(packageVersion(), "-v, --version", "print the version")
    .showHelpAfterError()
    .exitOverride();
  const globals = () => program.opts<{ db?: string; tenant?: string; retention?: string }>();
  registerModelCommands(program, globals, exit);
  registerInspectCommands(program, globals);
  registerEditCommands(program, globals);
  registerApprovalCommands(program, globals);
  registerMcpCommands(program, globals);
  registerServeCommand(program, globals);
  registerWorkerCommand(program, globals);
  registerReplayCommand(program, globals, exit);
  registerWorkflowCommands(program, globals, exit);
  registerWorkspaceCommands(program, globals);
  registerDoctorCommand(program, globals, exit);
  registerKeysCommands(program, globals);
  return program;
}

/** Runs the CLI with `argv` (as `process.argv`); resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  // `arbor tree | head`: a closed pipe ends the command quietly, as in other Unix tools.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  const exit = { code: 0 };
  const program = buildProgram(exit);
  try {
    // pi's `arbor [options] [messages...]`: no command word runs chat (a terminal) or run (print).
    const commands = program.commands.flatMap((command) => [command.name(), ...command.aliases()]);
    await program.parseAsync(piArgv(argv, commands, { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true }));
    return exit.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage errors were already printed by commander.
      return error.exitCode === 0 ? 0 : 2;
    }
    process.stderr.write(`${describeCliError(error)}\n`);
    return error instanceof CliError ? error.exitCode : exit.code !== 0 ? exit.code : 2;
  }
}

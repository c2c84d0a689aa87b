/**
 * `arbor doctor`: checks the event log file for damage (`src/store/sqlite/sqlite-integrity.ts`): SQLite's integrity check, a decode of every stored
 * event, and an audit of each stream's versions for lost events. Prints `ok <file> (<n> events)` and exits 0, or prints each problem naming the file
 * and exits 1. SQLite files only.
 */
import type { Command } from "commander";
import { CliError } from "../cli-error.ts";

/** Registers `doctor` on `program`. */
export function registerDoctorCommand(program: Command, globals: () => { db?: string }, exit: { code: number }): void {
  program
    .command("doctor")
    .description("Check the event log file for damage (SQLite integrity check, a decode of every event, lost events in a stream); exits 1 naming the file when damaged")
    .action(async () => {
      const { resolveDbPath, isPostgresUrl } = await import("../config.ts");
      const { checkSqliteLogFile } = await import("../../store/sqlite/sqlite-integrity.ts");
      const { existsSync } = await import("node:fs");
      const target = resolveDbPath(globals().db, process.env, process.cwd(), { create: false });
      if (isPostgresUrl(target)) throw new CliError("arbor doctor checks SQLite log files; for PostgreSQL use its own tools (amcheck, pg_dump).", 2);
      if (!existsSync(target)) throw new CliError(`No Arbor database at ${target}.`, 1);
      const report = checkSqliteLogFile(target);
      if (report.ok) {
        process.stdout.write(`ok ${report.path} (${report.events} events)\n`);
        return;
      }
      for (const problem of report.problems) process.stderr.write(`${problem}\n`);
      process.stderr.write(`damaged: ${report.path}: ${report.problems.length} problem(s) found. Restore it from a backup, or export the sessions that still read (arbor export).\n`);
      exit.code = 1;
    });
}

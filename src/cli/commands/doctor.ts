/**
 * `arbor doctor`: checks the event log file for damage (`src/store/sqlite/sqlite-integrity.ts`): SQLite's integrity check, a decode of every stored
 * event, and an audit of each stream's versions for lost events. Prints `ok <file> (<n> events)` and exits 0, or prints each problem naming the file
 * and exits 1. A path that is not an Arbor log (missing, a folder, an empty file, another file or SQLite database, a log of a newer schema) is no
 * damage: one line naming what it is, exit 2 (as every usage or input error), nothing checked or written. SQLite files only. A sound file with
 * half-deleted sessions (`../half-deleted.ts`) prints a warning for each and `warnings <file> …` instead of `ok`, exit 0.
 * An encrypted log's sealed data is opened with ARBOR_ENCRYPTION_KEY (`sqlite-sealed-check.ts`); without the key it is "not verified", exit 2.
 */
import type { Command } from "commander";
import { CliError } from "../cli-error.ts";

/** Registers `doctor` on `program`. */
export function registerDoctorCommand(program: Command, globals: () => { db?: string }, exit: { code: number }): void {
  program
    .command("doctor")
    .description("Check the event log file for damage (SQLite integrity check, a decode of every event, lost events in a stream); exits 1 naming the file when damaged, 2 when the path is not an Arbor log")
    .action(async () => {
      const { resolveDbPath, isPostgresUrl } = await import("../config.ts");
      const { checkSqliteLogFile } = await import("../../store/sqlite/sqlite-integrity.ts");
      const { InvalidArgumentError, LogSchemaError } = await import("../../core/errors.ts");
      const { existsSync } = await import("node:fs");
      const target = resolveDbPath(globals().db, process.env, process.cwd(), { create: false });
      if (isPostgresUrl(target)) throw new CliError("arbor doctor checks SQLite log files; for PostgreSQL use its own tools (amcheck, pg_dump).", 2);
      if (!existsSync(target)) {
        throw new CliError(`No Arbor database at ${target}: there is nothing to check (the default is .arbor/arbor.db in the current directory; pass --db PATH or set ARBOR_DB to name another).`, 2);
      }
      let report;
      try {
        report = checkSqliteLogFile(target);
      } catch (error) {
        if (InvalidArgumentError.isInstance(error) || LogSchemaError.isInstance(error)) {
          throw new CliError(`${error.message} Nothing was checked: arbor doctor checks Arbor event logs for damage, and this is not one.`, 2);
        }
        throw error;
      }
      // An encrypted log's sealed data, opened with ARBOR_ENCRYPTION_KEY (`sqlite-sealed-check.ts`).
      const sealed = await (await import("../../store/sqlite/sqlite-sealed-check.ts")).checkSealedLogData(target, (await import("../encryption-env.ts")).encryptionFromEnv(process.env));
      report = { ...report, ok: report.ok && sealed.problems.length === 0, problems: [...report.problems, ...sealed.problems] };
      // Sessions an interrupted delete left without their data key (no key needed to find them): warnings on stderr, and no "ok".
      const halfDeleted = report.ok ? (await import("../half-deleted.ts")).warnHalfDeleted(report.path) : 0;
      if (sealed.unverified && report.ok) throw new CliError(`not verified: ${sealed.unverified}`, 2);
      if (sealed.unverified) process.stderr.write(`not verified: ${sealed.unverified}\n`);
      if (report.ok) {
        const counted = `${report.events} events${sealed.note}`;
        process.stdout.write(halfDeleted === 0 ? `ok ${report.path} (${counted})\n` : `warnings ${report.path} (${counted}): ${halfDeleted} warning(s) above, no damage\n`);
        return;
      }
      for (const problem of report.problems) process.stderr.write(`${problem}\n`);
      process.stderr.write(`damaged: ${report.path}: ${report.problems.length} problem(s) found. Restore it from a backup, or export the sessions that still read (arbor export).\n`);
      exit.code = 1;
    });
}

/**
 * Commands that change sessions without a model: `fork` (`--files` restores the folder), `label`, `rm` (events and spill files; asks on a terminal
 * unless `--yes`), `export` (a pi session file; never overwrites without `--force`) and `import` (never writes the source; diagnostics on stderr).
 */
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { PI_EXPORT_FORMATS, type PiExportFormat } from "../../adapters/pi-jsonl/export.ts";
import { SessionImportError } from "../../core/errors.ts";
import { CliError } from "../cli-error.ts";
import { print } from "../print-line.ts";
import type { StoreFlags } from "../store-context.ts";

/** Loaded on first use by an action, so that `arbor --help` does not load the log, the models and their schemas. */
const loadActions = async () => ({
  ...(await import("../../adapters/pi-jsonl/index.ts")),
  ...(await import("../store-context.ts")),
  ...(await import("../../adapters/tools/spill-files.ts")),
  ...(await import("../../machines/session-actor.ts")),
  ...(await import("../half-deleted.ts")),
});

/** Asks a yes/no question on the terminal; true only for "y" or "yes". */
async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import("node:readline/promises");
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}

/** Registers the session-editing commands on `program`. */
export function registerEditCommands(program: Command, globals: () => StoreFlags): void {
  program
    .command("fork")
    .description("Create a new session from the path to an entry (default: the leaf)")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--at <entry>", "fork at this entry (id, unique prefix, or label)")
    .option("--files", "also put the session's folder back to the files recorded at the fork point (the source's unrecorded changes are saved first)")
    .action(async (reference: string, flags: { at?: string; files?: boolean }) => {
      const { withStore, resolveEntryId } = await loadActions();
      const { forkWithFiles } = await import("../workspace-actions.ts");
      await withStore(globals(), { mustExist: true }, async (store) => {
        const session = flags.files ? await store.openSessionForWrite(reference) : await store.openSession(reference);
        const entryId = flags.at === undefined ? undefined : resolveEntryId(session, flags.at);
        if (flags.files) {
          const { fork, line } = await forkWithFiles(store, session, entryId);
          print(fork.id);
          process.stdout.write(line);
          return;
        }
        const fork = await store.repo.fork(session.id, { entryId });
        print(fork.id);
      });
    });

  program
    .command("label")
    .description("Label an entry (an empty label clears it)")
    .argument("<session>", "session id, unique prefix, or latest")
    .argument("<entry>", "entry id, unique prefix, or label")
    .argument("<label>", "the label text")
    .action(async (reference: string, entryReference: string, label: string) => {
      const { withStore, resolveEntryId, sessionActorOf } = await loadActions();
      await withStore(globals(), { mustExist: true }, async (store) => {
        const session = await store.openSessionForWrite(reference);
        const targetId = resolveEntryId(session, entryReference);
        // Through the session's one writer (its session actor's), like every other write.
        const [entry] = await sessionActorOf(session).writes.appendEntries([label.trim() === "" ? { type: "label", targetId } : { type: "label", targetId, label }]);
        print(label.trim() === "" ? `cleared the label of ${targetId} (entry ${entry.id})` : `labelled ${targetId} "${label}" (entry ${entry.id})`);
      });
    });

  program
    .command("rm")
    .description("Delete a session (its events are physically removed); asks first on a terminal")
    .argument("<session>", "session id, short id or unique prefix")
    .option("-y, --yes", "delete without asking")
    .action(async (reference: string, flags: { yes?: boolean }) => {
      const { withStore, removeSpillFiles, spillFilesOf, finishHalfDeleted, undefinedIfKeyDestroyed } = await loadActions();
      await withStore(globals(), { mustExist: true }, async (store) => {
        const session = await store.openSessionForWrite(reference).catch(undefinedIfKeyDestroyed);
        // A half-deleted session (an earlier delete stopped after destroying its data key): opened only by its full id, finished from what is in clear.
        if (session === undefined) return finishHalfDeleted(store, reference, { ask: !flags.yes && process.stdin.isTTY === true, confirm });
        const id = session.id;
        const spills = spillFilesOf(session.view.getEntries());
        if (!flags.yes && process.stdin.isTTY === true) {
          const name = session.view.name ? ` "${session.view.name}"` : "";
          const count = session.view.getEntries().length;
          if (!(await confirm(`Delete session ${id}${name} (${count} entries)? Its events are removed for good. [y/N] `))) {
            throw new CliError(`Kept session ${id}; nothing was deleted.`, 1);
          }
        }
        await store.repo.delete(id);
        const removed = await removeSpillFiles(spills);
        print(removed.length > 0 ? `deleted ${id} and ${removed.length} spill file(s) of its bash output` : `deleted ${id}`);
      });
    });

  program
    .command("export")
    .description("Export a session as a pi session file (pi 1.x JSONL, which pi 1.6 opens on the same leaf)")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .option("--format <format>", `file format: ${PI_EXPORT_FORMATS.join(", ")}`, "pi-1")
    .option("--force", "overwrite an existing output file")
    .action(async (reference: string, flags: { output?: string; force?: boolean; format: string }) => {
      if (!(PI_EXPORT_FORMATS as readonly string[]).includes(flags.format)) {
        throw new CliError(`--format ${flags.format}: unknown format; arbor export writes ${PI_EXPORT_FORMATS.join(", ")}.`);
      }
      const format = flags.format as PiExportFormat;
      const { exportPiSession, exportPiSessionToFile, withStore, piExportWarnings } = await loadActions();
      await withStore(globals(), { readOnly: true }, async (store) => {
        const session = await store.openSession(reference);
        for (const warning of piExportWarnings(session)) process.stderr.write(`warning: ${warning}\n`);
        if (flags.output) {
          if (existsSync(flags.output) && !flags.force) {
            throw new CliError(`${flags.output} already exists; it was left untouched. Pass --force to replace it, or choose another -o file.`);
          }
          await exportPiSessionToFile(session, flags.output, { format, overwrite: flags.force === true });
          process.stderr.write(`exported ${session.id} to ${flags.output} (${format})\n`);
        } else {
          process.stdout.write(exportPiSession(session, { format }));
        }
      });
    });

  program
    .command("import")
    .description("Import a pi session file (v1, v2 or v3) into a new session; the file is never written")
    .argument("<file>", "pi session JSONL file")
    .option("--json", "print {sessionId, diagnostics} as JSON")
    .option("--skip-invalid", "import the rest when some entries are invalid (each skipped one is reported)")
    .action(async (file: string, flags: { json?: boolean; skipInvalid?: boolean }) => {
      const { importPiSession, withStore } = await loadActions();
      await withStore(globals(), {}, async (store) => {
        let imported;
        try {
          imported = await importPiSession(store.repo, file, flags.skipInvalid ? { invalidEntries: "skip" } : {});
        } catch (error) {
          if (!flags.skipInvalid && SessionImportError.isInstance(error)) {
            throw new CliError(error.message.replace('(pass invalidEntries: "skip" to import the rest)', "(pass --skip-invalid to import the rest)"));
          }
          throw error;
        }
        const { session, diagnostics, fromVersion } = imported;
        if (flags.json) return print(JSON.stringify({ sessionId: session.id, fromVersion, diagnostics }, null, 2));
        print(session.id);
        for (const diagnostic of diagnostics) {
          process.stderr.write(`${diagnostic.message}\n`);
        }
      });
    });
}

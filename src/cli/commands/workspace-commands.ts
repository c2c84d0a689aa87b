/**
 * `arbor workspace diff <session> [--at entry]` (what a restore would change: `A`/`M`/`D` lines, nothing when it matches) and `arbor workspace
 * export <session> <dir>` (writes the recorded tree; the session's folder is not read). `docs/workspace.md`.
 */
import type { Command } from "commander";
import type { StoreFlags } from "../store-context.ts";

/** Registers `arbor workspace` on `program`. */
export function registerWorkspaceCommands(program: Command, globals: () => StoreFlags): void {
  const workspace = program.command("workspace").description("The files a session recorded (see docs/workspace.md)");
  workspace
    .command("diff")
    .description("Show what restoring the files of an entry would change in the session's folder")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--at <entry>", "the entry (default: the leaf)")
    .option("--cwd <dir>", "compare this folder instead of the session's")
    .action(async (reference: string, flags: { at?: string; cwd?: string }) => {
      const { resolveEntryId, withStore } = await import("../store-context.ts");
      const { cliWorkspace, diffLines } = await import("../workspace-actions.ts");
      await withStore(globals(), { mustExist: true }, async (store) => {
        const session = await store.openSessionForWrite(reference);
        const entryId = flags.at === undefined ? session.view.leafId : resolveEntryId(session, flags.at);
        process.stdout.write(await diffLines(cliWorkspace(store, session, flags.cwd), entryId));
      });
    });
  workspace
    .command("export")
    .description("Write the files recorded at an entry into a folder")
    .argument("<session>", "session id, unique prefix, or latest")
    .argument("<dir>", "the folder to write (created when missing)")
    .option("--at <entry>", "the entry (default: the leaf)")
    .action(async (reference: string, directory: string, flags: { at?: string }) => {
      const { resolveEntryId, withStore } = await import("../store-context.ts");
      const { cliWorkspace } = await import("../workspace-actions.ts");
      await withStore(globals(), { mustExist: true }, async (store) => {
        const session = await store.openSessionForWrite(reference);
        const entryId = flags.at === undefined ? session.view.leafId : resolveEntryId(session, flags.at);
        // The export reads the log only: any folder will do as the recorder's root.
        const written = await cliWorkspace(store, session, directory).exportTo(entryId, directory);
        process.stdout.write(`exported ${written} path(s) of ${session.id} at ${entryId ?? "(root)"} to ${directory}\n`);
      });
    });
}

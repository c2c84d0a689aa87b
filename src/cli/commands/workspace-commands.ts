/**
 * `arbor workspace diff` and `arbor workspace export`: the files a session recorded
 * (`docs/workspace.md`).
 *
 * Contract (ours):
 * - `diff <session> [--at entry]` prints what a restore to the entry (default: the leaf) would
 *   change in the session's folder (`--cwd` for another): `A`, `M` or `D` and the path, one per
 *   line; nothing (exit 0) when the folder matches;
 * - `export <session> <dir> [--at entry]` writes the tree recorded at the entry into `dir`
 *   (created when missing) and prints how many paths it wrote; the session's folder is not read;
 * - a session that recorded no workspace gives an empty tree (export writes nothing).
 *
 * @example
 * ```sh
 * arbor workspace diff latest --at 3f2a9c1d && arbor workspace export latest /tmp/at-3f2a --at 3f2a9c1d
 * ```
 */
import type { Command } from "commander";

interface DbFlags {
  db?: string;
}

/** Registers `arbor workspace` on `program`. */
export function registerWorkspaceCommands(program: Command, globals: () => DbFlags): void {
  const workspace = program.command("workspace").description("The files a session recorded (see docs/workspace.md)");
  workspace
    .command("diff")
    .description("Show what restoring the files of an entry would change in the session's folder")
    .argument("<session>", "session id, unique prefix, or latest")
    .option("--at <entry>", "the entry (default: the leaf)")
    .option("--cwd <dir>", "compare this folder instead of the session's")
    .action(async (reference: string, flags: { at?: string; cwd?: string }) => {
      const { openStore, resolveEntryId } = await import("../store-context.ts");
      const { cliWorkspace, diffLines } = await import("../workspace-actions.ts");
      const store = openStore(globals(), { mustExist: true });
      try {
        const session = await store.openSessionForWrite(reference);
        const entryId = flags.at === undefined ? session.view.leafId : resolveEntryId(session, flags.at);
        process.stdout.write(await diffLines(cliWorkspace(store, session, flags.cwd), entryId));
      } finally {
        await store.close();
      }
    });
  workspace
    .command("export")
    .description("Write the files recorded at an entry into a folder")
    .argument("<session>", "session id, unique prefix, or latest")
    .argument("<dir>", "the folder to write (created when missing)")
    .option("--at <entry>", "the entry (default: the leaf)")
    .action(async (reference: string, directory: string, flags: { at?: string }) => {
      const { openStore, resolveEntryId } = await import("../store-context.ts");
      const { cliWorkspace } = await import("../workspace-actions.ts");
      const store = openStore(globals(), { mustExist: true });
      try {
        const session = await store.openSessionForWrite(reference);
        const entryId = flags.at === undefined ? session.view.leafId : resolveEntryId(session, flags.at);
        // The export reads the log only: any folder will do as the recorder's root.
        const written = await cliWorkspace(store, session, directory).exportTo(entryId, directory);
        process.stdout.write(`exported ${written} path(s) of ${session.id} at ${entryId ?? "(root)"} to ${directory}\n`);
      } finally {
        await store.close();
      }
    });
}

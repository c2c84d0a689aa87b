/**
 * `arbor keys rotate`: re-wraps every session's data key with the current master key (`ARBOR_ENCRYPTION_KEY`), reading the old wrappings with
 * `ARBOR_ENCRYPTION_PREVIOUS_KEYS` (`docs/privacy.md`, Key rotation). Prints `rotated <n> of <total> data keys to <master key id>`.
 */
import type { Command } from "commander";
import { CliError } from "../cli-error.ts";

/** Registers `keys rotate` on `program`. */
export function registerKeysCommands(program: Command, globals: () => { db?: string; tenant?: string; retention?: string }): void {
  const keys = program.command("keys").description("Encryption keys of an encrypted store (ARBOR_ENCRYPTION_KEY)");
  keys
    .command("rotate")
    .description("Re-wrap every session's data key with ARBOR_ENCRYPTION_KEY (old keys in ARBOR_ENCRYPTION_PREVIOUS_KEYS); the content is not rewritten")
    .action(async () => {
      const { withStore } = await import("../store-context.ts");
      if (!process.env.ARBOR_ENCRYPTION_KEY?.trim()) throw new CliError("arbor keys rotate needs ARBOR_ENCRYPTION_KEY (the new master key) and ARBOR_ENCRYPTION_PREVIOUS_KEYS (the old ones).", 2);
      await withStore(globals(), { mustExist: true, allTenants: true }, async (store) => {
        const result = await store.log.encryption!.rotate();
        process.stdout.write(`rotated ${result.rewrapped} of ${result.total} data keys to ${result.masterKeyId}\n`);
      });
    });
}

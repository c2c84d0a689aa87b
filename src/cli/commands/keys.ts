/**
 * `arbor keys rotate`: re-wraps every session's data key with the current master key (`ARBOR_ENCRYPTION_KEY`), reading the old wrappings with
 * `ARBOR_ENCRYPTION_PREVIOUS_KEYS` (`docs/privacy.md`, Key rotation). Prints `rotated <n> of <total> data keys to <master key id>`. A log with no
 * key store (nothing in it was ever sealed) is a `CliError` (exit 2) saying it is not encrypted; so is a missing `ARBOR_ENCRYPTION_KEY`. A log
 * that holds sealed data while its key store is missing is the library's `EncryptionKeyError` (the key store was lost).
 */
import type { Command } from "commander";
import { CliError } from "../cli-error.ts";
import type { CliKeyStore } from "../key-store.ts";

/** Registers `keys rotate` on `program`. */
export function registerKeysCommands(program: Command, globals: () => { db?: string; tenant?: string; retention?: string }): void {
  const keys = program.command("keys").description("Encryption keys of an encrypted store (ARBOR_ENCRYPTION_KEY)");
  keys
    .command("rotate")
    .description("Re-wrap every session's data key with ARBOR_ENCRYPTION_KEY (old keys in ARBOR_ENCRYPTION_PREVIOUS_KEYS); the content is not rewritten")
    .action(async () => {
      const { withStore } = await import("../store-context.ts");
      const { findKeyStore } = await import("../key-store.ts");
      const flags = globals();
      const keyStore = await findKeyStore(flags);
      const keyed = Boolean(process.env.ARBOR_ENCRYPTION_KEY?.trim());
      if (keyStore?.exists === false && !keyed) throw notEncrypted(keyStore, true);
      if (!keyed) throw new CliError("arbor keys rotate needs ARBOR_ENCRYPTION_KEY (the new master key) and ARBOR_ENCRYPTION_PREVIOUS_KEYS (the old ones).", 2);
      await withStore(flags, { mustExist: true, allTenants: true }, async (store) => {
        // Without a key store this re-wraps nothing and writes nothing; it refuses a log that holds sealed data (its key store was lost).
        const result = await store.log.encryption!.rotate();
        if (keyStore?.exists === false) throw notEncrypted(keyStore, false);
        process.stdout.write(`rotated ${result.rewrapped} of ${result.total} data keys to ${result.masterKeyId}\n`);
      });
    });
}

/** The refusal of a rotation of a log with no key store; `unchecked` when no key was given to look for sealed data (a lost key store). */
function notEncrypted(keyStore: CliKeyStore, unchecked: boolean): CliError {
  const lost = unchecked ? ` (if it holds sealed sessions, its key store was lost: restore ${keyStore.name} from where it was kept)` : "";
  return new CliError(`arbor keys rotate: the log is not encrypted: it has no key store (${keyStore.name}), so there is no data key to rotate${lost}. Nothing was written.`, 2);
}

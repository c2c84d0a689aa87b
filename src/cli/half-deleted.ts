/**
 * Half-deleted sessions in the CLI (ours; `docs/privacy.md`): `arbor rm <id>` finishes such a delete ({@link finishHalfDeleted}: the busy check from
 * the clear run events, then `repository.delete` with its tenant check); `arbor doctor` names each ({@link warnHalfDeleted}).
 */
import { sessionStreamId } from "../store/events/session-events.ts";
import { assertNoLiveRun } from "../machines/run-lease.ts";
import { isKeyDestroyed } from "../store/session/shredded-session.ts";
import { findHalfDeletedSessions } from "../store/sqlite/sqlite-half-deleted.ts";
import { CliError } from "./cli-error.ts";
import { print } from "./print-line.ts";
import { printable } from "./printable.ts";
import type { CliStore } from "./store-context.ts";

/** A rejection handler: undefined for a session whose data key is destroyed (opened by its full id), any other error rethrown. */
export function undefinedIfKeyDestroyed(error: unknown): undefined {
  if (isKeyDestroyed(error)) return undefined;
  throw error;
}

/**
 * `arbor rm` of session `id` whose data key is destroyed while its rows remain: refused (`SessionBusyError`) while another process runs it, asks
 * first when `ask`, then finishes the delete. Spill files cannot be found: their paths were in the sealed tool results.
 */
export async function finishHalfDeleted(store: CliStore, id: string, options: { ask: boolean; confirm: (question: string) => Promise<boolean> }): Promise<void> {
  await assertNoLiveRun(store.log, sessionStreamId(id));
  const question = `Session ${id} is half-deleted: an earlier delete destroyed its data key and stopped before removing its events. Finish deleting it? [y/N] `;
  if (options.ask && !(await options.confirm(question))) throw new CliError(`Kept session ${id}; nothing was deleted.`, 1);
  await store.repo.delete(id);
  print(`deleted ${id} (finished an interrupted delete: its data key was already destroyed, so spill files of its bash output, if any, were not found)`);
}

/**
 * Writes one warning line on stderr for each half-deleted session of the SQLite log at `path` (`sqlite-half-deleted.ts`), naming the command that
 * finishes its delete, and returns how many warnings it wrote (one for a key file it could not read; 0: nothing written).
 */
export function warnHalfDeleted(path: string): number {
  let sessions;
  try {
    sessions = findHalfDeletedSessions(path);
  } catch (error) {
    process.stderr.write(`warning: ${printable(path)}: could not look for half-deleted sessions: ${printable((error as Error).message)}\n`);
    return 1;
  }
  for (const session of sessions) {
    const [sessionId, tenant] = [shellWord(session.sessionId), shellWord(session.tenant)];
    const command = session.tenant === "default" ? `arbor rm ${sessionId}` : `arbor --tenant ${tenant} rm ${sessionId}`;
    process.stderr.write(
      `warning: ${printable(path)}: session ${sessionId} is half-deleted: its data key is destroyed but its events remain (a delete was interrupted); \`${command}\` (with ARBOR_ENCRYPTION_KEY set) finishes the delete.\n`,
    );
  }
  return sessions.length;
}

/** `text` as one shell word, its control characters shown as `\xNN` (`printable.ts`): as it is when it needs no quoting, else in single quotes. */
function shellWord(text: string): string {
  const shown = printable(text);
  return /^[A-Za-z0-9._:@%+=,/-]+$/.test(shown) ? shown : `'${shown.replace(/'/g, "'\\''")}'`;
}

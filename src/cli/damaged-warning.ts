/** The CLI's warning for a session listed as damaged (ours): on stderr, control characters shown as `\xNN`, pointing at `arbor doctor`. */
import type { SessionSummary } from "../store/session-types.ts";
import { printable } from "./printable.ts";

/** Writes the warning for `session` when it is damaged; true when it was. */
export function warnIfDamaged(session: SessionSummary): boolean {
  if (!session.damaged) return false;
  process.stderr.write(printable(`warning: session ${session.id} is damaged and cannot be opened: ${session.damaged.message} Run arbor doctor to check the log.`) + "\n");
  return true;
}

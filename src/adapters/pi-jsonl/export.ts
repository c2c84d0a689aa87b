/**
 * Export of an Arbor session to pi v3 JSONL, which pi 0.73.1 opens.
 *
 * Contract (ours; format pi's, `docs/pi-parity.md`):
 * - line 1 is the header `{"type":"session","version":3,"id","timestamp","cwd"}` (+ `parentSession`
 *   = the parent session id for forks); then every entry verbatim (unknown kinds too), one per line;
 * - pi has no leaf pointer (its leaf is the last line), so the current leaf entry is written LAST
 *   and the others keep append order; every `parentId` still names an entry of the file (pi
 *   resolves parents through an id map, so a child written before its parent is fine); a `null`
 *   leaf cannot be expressed in pi and the file then opens on its last entry;
 * - `exportPiSessionToFile` never overwrites: an existing file makes it throw `ArborError` with
 *   code `FILE_EXISTS` unless `overwrite: true`, which writes a temp file next to it and renames it
 *   over the target (never a truncated half-written file).
 *
 * @example
 * ```ts
 * await exportPiSessionToFile(session, "out.jsonl");
 * ```
 */
import { randomUUID } from "node:crypto";
import { rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { SessionEntry } from "../../core/entries.ts";
import { ArborError } from "../../core/errors.ts";
import type { SessionHandle, SessionView } from "../../store/session-types.ts";
import { PI_SESSION_VERSION } from "./migrate.ts";

function viewOf(session: SessionHandle | SessionView): SessionView {
  return "view" in session ? session.view : session;
}

/**
 * The entries in export order: append order with the leaf entry moved last (pi's leaf is the last line).
 *
 * @example
 * ```ts
 * piExportOrder(session.view).at(-1)?.id === session.view.leafId;
 * ```
 */
export function piExportOrder(view: SessionView): SessionEntry[] {
  const entries = view.getEntries();
  const leafId = view.leafId;
  if (leafId === null) return entries;
  const position = entries.findIndex((entry) => entry.id === leafId);
  if (position < 0 || position === entries.length - 1) return entries;
  return [...entries.slice(0, position), ...entries.slice(position + 1), entries[position]];
}

/**
 * Serializes a session as pi v3 JSONL (see the module contract). Ends with a newline.
 *
 * @example
 * ```ts
 * const text = exportPiSession(session);
 * ```
 */
export function exportPiSession(session: SessionHandle | SessionView): string {
  const view = viewOf(session);
  const info = view.info;
  const header: Record<string, unknown> = { type: "session", version: PI_SESSION_VERSION, id: view.sessionId, timestamp: info.createdAt, cwd: info.cwd };
  if (info.parentSessionId !== undefined) header.parentSession = info.parentSessionId;
  const lines = [JSON.stringify(header)];
  for (const entry of piExportOrder(view)) lines.push(JSON.stringify(entry));
  return `${lines.join("\n")}\n`;
}

/**
 * Writes {@link exportPiSession} to `path`. Refuses an existing file unless `overwrite` (see the
 * module contract). Throws `ArborError` (`FILE_EXISTS`) or the file system's error.
 *
 * @example
 * ```ts
 * await exportPiSessionToFile(session, "/tmp/s.jsonl", { overwrite: false });
 * ```
 */
export async function exportPiSessionToFile(session: SessionHandle | SessionView, path: string, options: { overwrite?: boolean } = {}): Promise<void> {
  const text = exportPiSession(session);
  if (!options.overwrite) {
    try {
      await writeFile(path, text, { flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") {
        throw new ArborError("FILE_EXISTS", `${path} already exists; not overwritten (pass overwrite: true to replace it).`, { cause: error, details: { path } });
      }
      throw error;
    }
    return;
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
  try {
    await writeFile(temporary, text, { flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

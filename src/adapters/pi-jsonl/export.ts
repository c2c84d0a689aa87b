/**
 * Export of an Arbor session to a pi session file (format `pi-1`, header version 3, which pi 1.x and 0.73.1 open). The header comes first, then
 * every entry verbatim with the current leaf LAST (pi opens on the last line). `exportPiSessionToFile` never overwrites unless `overwrite: true`
 * (`FILE_EXISTS`), and then via a temp file and rename; an unknown format throws `INVALID_ARGUMENT`.
 */
import { randomUUID } from "node:crypto";
import { rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { isKnownEntry, type SessionEntry } from "../../core/entries.ts";
import { ArborError, InvalidArgumentError } from "../../core/errors.ts";
import type { SessionHandle, SessionView } from "../../store/session-types.ts";
import { PI_SESSION_VERSION } from "./migrate.ts";
import { ignoreError } from "../../core/ignored.ts";

/**
 * The pi session formats Arbor writes: `pi-1`, pi 1.x's session file (header version 3).
 * @example
 * if (!PI_EXPORT_FORMATS.includes(format)) throw new Error(`--format: one of ${PI_EXPORT_FORMATS.join(", ")}`);
 */
export const PI_EXPORT_FORMATS = ["pi-1"] as const;

/** One of {@link PI_EXPORT_FORMATS}. */
export type PiExportFormat = (typeof PI_EXPORT_FORMATS)[number];

/** Options of {@link exportPiSession}. */
export interface PiExportOptions {
  /** The file format (default `"pi-1"`). */
  format?: PiExportFormat;
}

function checkFormat(format: unknown): PiExportFormat {
  if (format === undefined) return "pi-1";
  if ((PI_EXPORT_FORMATS as readonly unknown[]).includes(format)) return format as PiExportFormat;
  throw new InvalidArgumentError(`Unknown pi export format ${JSON.stringify(format)}: Arbor writes ${PI_EXPORT_FORMATS.join(", ")}.`, { details: { format } });
}

function viewOf(session: SessionHandle | SessionView): SessionView {
  return "view" in session ? session.view : session;
}

/** The entries in export order: append order with the leaf entry moved last (pi's leaf is the last line). */
export function piExportOrder(view: SessionView): SessionEntry[] {
  const entries = view.getEntries();
  const leafId = view.leafId;
  if (leafId === null) return entries;
  const position = entries.findIndex((entry) => entry.id === leafId);
  if (position < 0 || position === entries.length - 1) return entries;
  return [...entries.slice(0, position), ...entries.slice(position + 1), entries[position]];
}

/**
 * What pi will not see as Arbor does in an export of `session`, as sentences (empty: nothing): Arbor's `active_tools_change` entries and entry kinds
 * Arbor does not know (written, pi ignores them), one sentence per kind; a `null` leaf (pi opens the file on its last entry); a leaf that is a
 * `label` or `session_info` entry overridden by a later one (written last, it is the latest in file order, which is what pi reads, so pi shows its
 * label or name instead of the later one).
 * @example
 * for (const warning of piExportWarnings(session)) console.warn(warning);
 */
export function piExportWarnings(session: SessionHandle | SessionView): string[] {
  const view = viewOf(session);
  const entries = view.getEntries();
  const warnings: string[] = [];
  const ignored = new Map<string, number>();
  for (const entry of entries) if (entry.type === "active_tools_change" || !isKnownEntry(entry)) ignored.set(entry.type, (ignored.get(entry.type) ?? 0) + 1);
  for (const [type, count] of ignored) {
    warnings.push(
      type === "active_tools_change"
        ? `${count} active_tools_change entr${count === 1 ? "y is" : "ies are"} written, but pi has no such entry and ignores ${count === 1 ? "it" : "them"}: the tool set ${count === 1 ? "it sets" : "they set"} does not carry over (pi 1.x keeps its tools in system messages).`
        : `${count} entr${count === 1 ? "y" : "ies"} of kind ${JSON.stringify(type)}, unknown to Arbor, ${count === 1 ? "is" : "are"} written as imported; pi ignores kinds it does not know.`,
    );
  }
  if (view.leafId === null) {
    if (entries.length > 0) warnings.push("The session's leaf is before its first entry (null); pi has no such leaf and opens the file on its last entry.");
    return warnings;
  }
  const position = entries.findIndex((entry) => entry.id === view.leafId);
  const leaf = entries[position] as SessionEntry & { targetId?: unknown; label?: unknown; name?: unknown };
  if (leaf?.type === "label" && entries.slice(position + 1).some((entry) => entry.type === "label" && (entry as { targetId?: unknown }).targetId === leaf.targetId)) {
    warnings.push(`The leaf ${leaf.id} is a label entry of ${String(leaf.targetId)} that a later label replaces; pi reads labels in file order, where the leaf is last, so it shows ${leaf.label === undefined ? "no label" : JSON.stringify(leaf.label)} there.`);
  }
  if (leaf?.type === "session_info" && entries.slice(position + 1).some((entry) => entry.type === "session_info")) {
    warnings.push(`The leaf ${leaf.id} is a session_info entry that a later one replaces; pi reads the name in file order, where the leaf is last, so it shows ${leaf.name ? JSON.stringify(leaf.name) : "no name"}.`);
  }
  return warnings;
}

/**
 * Serializes a session as a pi session file (see the module contract). Ends with a newline.
 * Throws `ArborError` (`INVALID_ARGUMENT`) for an unknown format.
 * @example
 * const text = exportPiSession(session, { format: "pi-1" });
 */
export function exportPiSession(session: SessionHandle | SessionView, options: PiExportOptions = {}): string {
  checkFormat(options.format);
  const view = viewOf(session);
  const info = view.info;
  const header: Record<string, unknown> = { type: "session", version: PI_SESSION_VERSION, id: view.sessionId, timestamp: info.createdAt, cwd: info.cwd, ...info.source?.header };
  if (info.parentSessionId !== undefined) header.parentSession = info.parentSessionId;
  const lines = [JSON.stringify(header)];
  for (const entry of piExportOrder(view)) lines.push(JSON.stringify(entry));
  return `${lines.join("\n")}\n`;
}

/**
 * Writes {@link exportPiSession} to `path`. Refuses an existing file unless `overwrite` (see the
 * module contract). Throws `ArborError` (`FILE_EXISTS`, `INVALID_ARGUMENT`) or the file system's error.
 * @example
 * await exportPiSessionToFile(session, "/tmp/s.jsonl", { overwrite: false });
 */
export async function exportPiSessionToFile(session: SessionHandle | SessionView, path: string, options: PiExportOptions & { overwrite?: boolean } = {}): Promise<void> {
  const text = exportPiSession(session, { format: options.format });
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
    await unlink(temporary).catch(ignoreError("removing the temp file of a failed export; the export's error is thrown"));
    throw error;
  }
}

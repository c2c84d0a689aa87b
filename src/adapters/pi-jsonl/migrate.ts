/**
 * Migration of parsed pi session entries to format version 3, as pi does it: v1 → v2 gives fresh unique ids and a parent chain (a dangling
 * `firstKeptEntryIndex` becomes `""` plus a diagnostic), v2 → v3 renames `hookMessage` to `custom`. Unknown versions throw `SessionImportError`.
 * Pure; never mutates its input.
 */
import { randomUUID } from "node:crypto";
import { SessionImportError } from "../../core/errors.ts";
import type { ImportDiagnostic, ParsedLine, ParsedPiFile } from "./parse.ts";

/**
 * The current pi session format version.
 * @example
 * const header = { type: "session", version: PI_SESSION_VERSION, id, timestamp, cwd };
 */
export const PI_SESSION_VERSION = 3;

/** A v3 entry with the line it came from. */
export interface MigratedLine {
  line: number;
  entry: Record<string, unknown>;
}

/** The result of {@link migratePiEntries}. */
export interface MigratedPiFile {
  /** The file's version before migration. */
  fromVersion: 1 | 2 | 3;
  lines: MigratedLine[];
  diagnostics: ImportDiagnostic[];
}

function freshId(taken: Set<string>): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const id = randomUUID().slice(0, 8);
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/**
 * The header's format version (1, 2 or 3; missing = 1, as pi). Throws `SessionImportError` for anything else.
 * @example
 * piFileVersion({ type: "session", id: "x" }); // 1
 */
export function piFileVersion(header: { version?: unknown }): 1 | 2 | 3 {
  const version = header.version ?? 1;
  if (version === 1 || version === 2 || version === 3) return version;
  throw new SessionImportError(
    `Unsupported pi session version ${JSON.stringify(version)}: Arbor imports versions 1, 2 and 3. Nothing was imported.`,
    { details: { version } },
  );
}

/**
 * Migrates parsed lines to v3 (see the module contract).
 * @example
 * const { fromVersion, lines } = migratePiEntries(parsed);
 */
export function migratePiEntries(parsed: ParsedPiFile): MigratedPiFile {
  const fromVersion = piFileVersion(parsed.header);
  const diagnostics: ImportDiagnostic[] = [];
  const lines: MigratedLine[] = parsed.lines.map((item: ParsedLine) => ({ line: item.line, entry: structuredClone(item.value) }));
  if (fromVersion < 2) {
    const taken = new Set<string>();
    const idByIndex = new Map<number, string>();
    let previous: string | null = null;
    lines.forEach((item, position) => {
      const entry = item.entry;
      const id = freshId(taken);
      taken.add(id);
      entry.id = id;
      entry.parentId = previous;
      previous = id;
      idByIndex.set(parsed.lines[position].index, id);
      if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
        const target = idByIndex.get(entry.firstKeptEntryIndex);
        if (target === undefined) {
          entry.firstKeptEntryId = "";
          diagnostics.push({
            kind: "dangling_first_kept",
            line: item.line,
            message: `Line ${item.line}: compaction firstKeptEntryIndex ${entry.firstKeptEntryIndex} names no earlier entry; no entries before the compaction are kept (as in pi).`,
          });
        } else {
          entry.firstKeptEntryId = target;
        }
        delete entry.firstKeptEntryIndex;
      }
    });
  }
  if (fromVersion < 3) {
    for (const { entry } of lines) {
      const message = entry.message as { role?: unknown } | undefined;
      if (entry.type === "message" && message && message.role === "hookMessage") message.role = "custom";
    }
  }
  if (fromVersion < PI_SESSION_VERSION) {
    diagnostics.push({ kind: "migrated", message: `Migrated from pi session version ${fromVersion} to ${PI_SESSION_VERSION} in memory; the source file was not written.` });
  }
  return { fromVersion, lines, diagnostics };
}

/**
 * Import of a pi session file (format 1, 2 or 3) into a new Arbor session. The source is only read. Bad headers, versions or files throw
 * `SessionImportError` and create nothing; an invalid entry refuses the import unless `invalidEntries: "skip"`; unknown entry types are kept
 * verbatim; repeated ids get fresh ones. Everything is written in ONE atomic append, the leaf being the last entry in file order.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { isKnownEntry, type SessionEntry } from "../../core/entries.ts";
import { SessionImportError } from "../../core/errors.ts";
import { sessionEntrySchema } from "../../store/events/message-schemas.ts";
import type { SessionHandle, SessionRepository } from "../../store/session-types.ts";
import { migratePiEntries } from "./migrate.ts";
import { parsePiJsonl, type ImportDiagnostic } from "./parse.ts";

/** Options of {@link importPiSession}. */
export interface ImportPiSessionOptions {
  /** Arbor session id (default: a new UUIDv7; the pi id is kept in `info.source.originalId`). */
  id?: string;
  tenant?: string;
  metadata?: Record<string, unknown>;
  /** What to do with an entry that fails the entry schema (default `"reject"`). */
  invalidEntries?: "reject" | "skip";
}

/** The result of an import. */
export interface ImportPiSessionResult {
  session: SessionHandle;
  diagnostics: ImportDiagnostic[];
  /** The file's pi format version before migration. */
  fromVersion: 1 | 2 | 3;
}

/**
 * The v3 entries of a pi file's text, parsed, migrated and validated (see the module contract).
 * Pure; used by the importer and tests. Throws `SessionImportError`.
 * @example
 * const { entries, diagnostics } = piEntriesFromText(text, { invalidEntries: "skip" });
 */
export function piEntriesFromText(
  text: string,
  options: { source?: string; invalidEntries?: "reject" | "skip" } = {},
): { header: Record<string, unknown>; entries: SessionEntry[]; diagnostics: ImportDiagnostic[]; fromVersion: 1 | 2 | 3 } {
  const source = options.source ?? "the session file";
  const parsed = parsePiJsonl(text, source);
  const migrated = migratePiEntries(parsed);
  const diagnostics = [...parsed.diagnostics, ...migrated.diagnostics];
  const problems: string[] = [];
  const valid: { line: number; entry: SessionEntry }[] = [];
  // Skipped entries' ids → their parents: what followed a skipped entry is linked to its nearest kept ancestor (also one later in the file).
  const skippedParents = new Map<string, string | null>();
  for (const { line, entry } of migrated.lines) {
    const result = sessionEntrySchema.safeParse(entry);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue?.path.length ? issue.path.join(".") : "(entry)";
      const message = `Line ${line} (type ${JSON.stringify(entry.type)}): ${where}: ${issue?.message ?? "invalid"}`;
      problems.push(message);
      diagnostics.push({ kind: "invalid_entry", line, message: `${message}; skipped.` });
      if (typeof entry.id === "string") skippedParents.set(entry.id, typeof entry.parentId === "string" ? entry.parentId : null);
      continue;
    }
    valid.push({ line, entry: entry as unknown as SessionEntry });
  }
  // A repeated id: as in pi (its id map keeps the last entry), the last entry with it keeps it, so every entry naming it as parent follows that one;
  // the earlier ones get fresh ids.
  const lastLine = new Map<string, number>();
  for (const { line, entry } of valid) lastLine.set(entry.id, line);
  const kept = new Set(lastLine.keys());
  for (const { line, entry } of valid) {
    const last = lastLine.get(entry.id)!;
    if (last === line) continue;
    let id = randomUUID().slice(0, 8);
    while (kept.has(id)) id = randomUUID().slice(0, 8);
    kept.add(id);
    diagnostics.push({ kind: "duplicate_id", line, message: `Line ${line}: entry id ${entry.id} is used again on line ${last}; as in pi, the last entry keeps it (children follow that one), and this one got id ${id}.` });
    entry.id = id;
  }
  const entries: SessionEntry[] = [];
  for (const { line, entry } of valid) {
    const parent = keptAncestor(entry.parentId, skippedParents, kept);
    if (parent !== entry.parentId) {
      diagnostics.push({
        kind: "relinked_entry",
        line,
        message: `Line ${line}: entry ${entry.id}'s parent ${entry.parentId} was skipped (invalid); it now follows ${parent ?? "nothing (a new root)"}.`,
      });
      entry.parentId = parent;
    }
    entries.push(entry);
  }
  diagnostics.push(...unmodeledDiagnostics(migrated.lines, entries), ...unknownKindDiagnostics(migrated.lines, entries));
  if (problems.length > 0 && (options.invalidEntries ?? "reject") === "reject") {
    const unparseable = diagnostics.filter((diagnostic) => diagnostic.kind === "unparseable_line").length;
    const also = unparseable === 0 ? "" : ` (and ${unparseable} line${unparseable === 1 ? "" : "s"} that ${unparseable === 1 ? "is" : "are"} not JSON, which an import skips as pi does)`;
    throw new SessionImportError(
      `${source} has ${problems.length} invalid entr${problems.length === 1 ? "y" : "ies"}${also}; nothing was imported (pass invalidEntries: "skip" to import the rest). ` +
        problems.slice(0, 5).join("; ") +
        (problems.length > 5 ? `; … ${problems.length - 5} more` : ""),
      { details: { problems } },
    );
  }
  return { header: parsed.header, entries, diagnostics, fromVersion: migrated.fromVersion };
}

/**
 * `parentId`, or the nearest ancestor of it that was not skipped, following skipped entries' parents (`null`: a skipped root, or a cycle of skipped
 * entries). A parent that is kept, or that is in no line of the file, is returned as it is.
 */
function keptAncestor(parentId: string | null, skippedParents: ReadonlyMap<string, string | null>, kept: ReadonlySet<string>): string | null {
  let current = parentId;
  const visited = new Set<string>();
  while (current !== null && !kept.has(current) && skippedParents.has(current)) {
    if (visited.has(current)) return null;
    visited.add(current);
    current = skippedParents.get(current)!;
  }
  return current;
}

/** What Arbor keeps but does not apply, per pi 1.x feature (pi 1.6's `docs/session-format.md`). */
const UNMODELED: { test: (entry: Record<string, unknown>) => boolean; what: string }[] = [
  {
    test: (entry) => entry.type === "message" && (entry.message as { role?: unknown }).role === "system",
    what: "pi 1.x system message(s) (role \"system\") in the context as pi 1.6 builds it, but not applied: Arbor's harness builds the system prompt and tool set (convertToLlm drops them)",
  },
  {
    test: (entry) => entry.type === "compaction" && entry.systemMessage !== undefined,
    what: "compaction systemMessage checkpoint(s) in the context as pi 1.6 builds it, but not applied (Arbor's harness owns the system prompt)",
  },
  {
    test: (entry) => entry.type === "message" && (entry.message as { stopReason?: unknown }).stopReason === "deferred",
    what: "assistant message(s) with stopReason \"deferred\" kept; Arbor treats them as finished turns and does not fetch the deferred response",
  },
  {
    test: (entry) => {
      if (entry.type !== "context_edit" || entry.replacement === null) return false;
      const content = (entry.replacement as { content?: unknown } | undefined)?.content;
      return typeof entry.replacement !== "object" || !(typeof content === "string" || Array.isArray(content));
    },
    what: "context_edit entr(ies) whose replacement is not null or { content } kept but not applied (the target is sent unchanged)",
  },
];

function unmodeledDiagnostics(lines: readonly { line: number; entry: Record<string, unknown> }[], kept: readonly SessionEntry[]): ImportDiagnostic[] {
  const keptEntries = new Set<unknown>(kept);
  const diagnostics: ImportDiagnostic[] = [];
  for (const { test, what } of UNMODELED) {
    const at = lines.filter(({ entry }) => keptEntries.has(entry) && test(entry)).map(({ line }) => line);
    if (at.length === 0) continue;
    const where = at.slice(0, 5).join(", ") + (at.length > 5 ? `, … ${at.length - 5} more` : "");
    diagnostics.push({ kind: "unmodeled", line: at[0], message: `${at.length} ${what} (line${at.length === 1 ? "" : "s"} ${where}).` });
  }
  return diagnostics;
}

/** One diagnostic per unknown entry kind: kept (and exported) as it is, but not applied. */
function unknownKindDiagnostics(lines: readonly { line: number; entry: Record<string, unknown> }[], kept: readonly SessionEntry[]): ImportDiagnostic[] {
  const keptEntries = new Set<unknown>(kept);
  const byKind = new Map<string, number[]>();
  for (const { line, entry } of lines) {
    if (!keptEntries.has(entry) || isKnownEntry(entry as unknown as SessionEntry)) continue;
    const kind = String(entry.type);
    byKind.set(kind, [...(byKind.get(kind) ?? []), line]);
  }
  return [...byKind].map(([kind, at]) => ({
    kind: "unknown_entry" as const,
    line: at[0],
    message:
      `${at.length} entr${at.length === 1 ? "y" : "ies"} of unknown kind ${JSON.stringify(kind)} (line${at.length === 1 ? "" : "s"} ` +
      `${at.slice(0, 5).join(", ")}${at.length > 5 ? `, … ${at.length - 5} more` : ""}) kept and exported as they are, but not applied to the context.`,
  }));
}

/**
 * Imports the pi session file at `path` into a new session of `repo` (see the module contract).
 * Throws `SessionImportError`; the log's errors (e.g. `ExpectedVersionConflictError` for a taken id) pass through.
 * @example
 * const { session, diagnostics } = await importPiSession(repo, "session.jsonl");
 * for (const diagnostic of diagnostics) console.warn(diagnostic.line, diagnostic.message);
 */
export async function importPiSession(repo: SessionRepository, path: string, options: ImportPiSessionOptions = {}): Promise<ImportPiSessionResult> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await readFile(absolute, "utf8");
  } catch (error) {
    throw new SessionImportError(`Cannot read pi session file ${absolute}: ${(error as Error).message}`, { cause: error, details: { path: absolute } });
  }
  const { header, entries, diagnostics, fromVersion } = piEntriesFromText(text, { source: absolute, invalidEntries: options.invalidEntries });
  // The header's other fields (pi's parentSession path, fields of later versions) are kept and written back on export.
  const { type: _type, version: _version, id: _id, timestamp: _timestamp, cwd: _cwd, ...extra } = header;
  const createdAt = typeof header.timestamp === "string" && !Number.isNaN(Date.parse(header.timestamp)) ? header.timestamp : undefined;
  const session = await repo.importEntries({
    id: options.id,
    cwd: typeof header.cwd === "string" ? header.cwd : "",
    createdAt,
    tenant: options.tenant,
    metadata: options.metadata,
    source: { kind: "pi-jsonl", path: absolute, version: fromVersion, originalId: header.id as string, ...(Object.keys(extra).length > 0 ? { header: extra } : {}) },
    entries,
  });
  return { session, diagnostics, fromVersion };
}

/**
 * Parsing of pi session files (JSONL, the first value the header). Blank and non-JSON lines are skipped with a diagnostic naming the line; `values`
 * keeps every parsed value in file order; a missing or corrupt header, or a line nested deeper than {@link MAX_LINE_DEPTH}, throws
 * `SessionImportError`. Nothing else throws; no file system access.
 */
import { SessionImportError } from "../../core/errors.ts";

/** A problem found while importing, repaired or skipped rather than thrown. */
export interface ImportDiagnostic {
  kind:
    | "blank_line"
    | "unparseable_line"
    | "not_an_object"
    | "extra_header"
    | "invalid_entry"
    | "duplicate_id"
    | "relinked_entry"
    | "dangling_first_kept"
    | "migrated"
    | "unmodeled"
    | "unknown_entry";
  /** 1-based line number in the source file, when the problem is on one line. */
  line?: number;
  message: string;
}

/** A pi session header (other fields are kept). */
export interface PiSessionHeader {
  type: "session";
  id: string;
  version?: number;
  timestamp?: string;
  cwd?: string;
  parentSession?: string;
  [key: string]: unknown;
}

/** One parsed line. `index` is its position in pi's parsed array (header = 0). */
export interface ParsedLine {
  line: number;
  index: number;
  value: Record<string, unknown>;
}

/** The result of {@link parsePiJsonl}. */
export interface ParsedPiFile {
  header: PiSessionHeader;
  /** Parsed object lines after the header, in file order. */
  lines: ParsedLine[];
  /** Every parsed value in file order (pi's array), header first. */
  values: unknown[];
  diagnostics: ImportDiagnostic[];
}

/** The deepest nesting of arrays and objects a line may have (real pi entries stay far below it). */
export const MAX_LINE_DEPTH = 1_000;

/** True when `value` nests deeper than `limit` (an iterative walk: no recursion on deep input). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Parses pi session JSONL text (see the module contract). Throws `SessionImportError` for a
 * missing or corrupt header; `source` names the file in messages.
 * @example
 * parsePiJsonl('{"type":"session","version":3,"id":"x","timestamp":"…","cwd":"/w"}\n');
 */
export function parsePiJsonl(text: string, source = "the session file"): ParsedPiFile {
  const content = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const rawLines = content.split("\n");
  if (rawLines.length > 1 && rawLines[rawLines.length - 1] === "") rawLines.pop();
  const diagnostics: ImportDiagnostic[] = [];
  const values: unknown[] = [];
  const lines: ParsedLine[] = [];
  let header: PiSessionHeader | undefined;
  rawLines.forEach((raw, position) => {
    const line = position + 1;
    if (!raw.trim()) {
      diagnostics.push({ kind: "blank_line", line, message: `Line ${line} is blank; skipped.` });
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      if (!header) {
        throw new SessionImportError(
          `${source} has a corrupt header: line ${line}, the first non-blank line, is not valid JSON (${(error as Error).message}). A pi session file starts with {"type":"session","id":…}. Nothing was imported.`,
          { details: { line } },
        );
      }
      diagnostics.push({ kind: "unparseable_line", line, message: `Line ${line} is not valid JSON (${(error as Error).message}); skipped.` });
      return;
    }
    if (nestsDeeperThan(value, MAX_LINE_DEPTH)) {
      throw new SessionImportError(`${source}, line ${line}: the JSON nests deeper than ${MAX_LINE_DEPTH} levels of arrays and objects, which no pi entry does. Nothing was imported.`, { details: { line, maxDepth: MAX_LINE_DEPTH } });
    }
    if (!header) {
      if (!isObject(value) || value.type !== "session" || typeof value.id !== "string") {
        throw new SessionImportError(
          `${source} has no pi session header: line ${line} must be {"type":"session","id":<string>,…} but is ${JSON.stringify(value).slice(0, 120)}. Nothing was imported.`,
          { details: { line } },
        );
      }
      header = value as PiSessionHeader;
      values.push(value);
      return;
    }
    values.push(value);
    if (!isObject(value)) {
      diagnostics.push({ kind: "not_an_object", line, message: `Line ${line} is JSON but not an object; skipped.` });
      return;
    }
    if (value.type === "session") {
      diagnostics.push({ kind: "extra_header", line, message: `Line ${line} is a second session header; skipped.` });
      return;
    }
    lines.push({ line, index: values.length - 1, value });
  });
  if (!header) {
    throw new SessionImportError(`${source} is empty: a pi session file starts with a {"type":"session",…} header line. Nothing was imported.`);
  }
  return { header, lines, values, diagnostics };
}

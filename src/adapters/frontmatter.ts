/**
 * Frontmatter parsing for skills and prompt templates: YAML between `---` lines, or the seed's JSON object followed by `---`; a BOM is dropped and
 * line endings become LF first. Never throws: a bad or unclosed block yields `error` and `{}` attributes, the body being the text after the closing
 * line when there is one. {@link readResourceFile} reads such files (strict UTF-8, at most 1 MiB).
 * `yaml` is required on the first YAML block, not when this module loads.
 */
import { readFileSync, statSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type * as Yaml from "yaml";
import { lazyRequire } from "../core/lazy-require.ts";

const yaml = lazyRequire<typeof Yaml>("yaml");

/** Largest skill or template file Arbor reads, in bytes (1 MiB); bigger files are refused, not truncated. */
export const MAX_RESOURCE_FILE_BYTES = 1024 * 1024;

/** The outcome of {@link readResourceFile}: the text, or why it could not be used. */
export type ResourceFileRead =
  | { ok: true; text: string }
  | { ok: false; reason: "read-failed" | "file-too-large" | "encoding-invalid"; message: string };

/** Expands a leading `~` (alone or `~/…`) to the home directory, as pi does for resource paths. */
export function expandHome(path: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return path;
}

/** A path the user gave for skills or templates, resolved (`~`, relative), and its stats: undefined when it cannot be stat'ed. */
export function statGivenPath(given: string): { path: string; stats: Stats | undefined } {
  const path = resolve(expandHome(given.trim()));
  try {
    return { path, stats: statSync(path) };
  } catch {
    return { path, stats: undefined };
  }
}

/** The `name-collision` diagnostic of a skill or template that lost its name to an earlier file. */
export function nameCollision(what: "skill" | "template", loser: { name: string; filePath: string }, winnerPath: string) {
  return {
    severity: "error",
    code: "name-collision",
    message: `${what} name "${loser.name}" is already taken by ${winnerPath}; this one is not loaded`,
    path: loser.filePath,
    collision: { name: loser.name, winnerPath, loserPath: loser.filePath },
  } as const;
}

/** The message of an error, or its string form. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads a skill or template file as strict UTF-8, refusing files over {@link MAX_RESOURCE_FILE_BYTES} (checked with `stat` before reading) and bytes
 * that are not valid UTF-8 (a binary file). Never throws.
 */
export function readResourceFile(path: string, maxBytes = MAX_RESOURCE_FILE_BYTES): ResourceFileRead {
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > maxBytes) return { ok: false, reason: "file-too-large", message: `file is ${size} bytes, over the ${maxBytes} allowed` };
    bytes = readFileSync(path);
  } catch (error) {
    return { ok: false, reason: "read-failed", message: `cannot read file: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, reason: "encoding-invalid", message: "file is not valid UTF-8 text" };
  }
}

/** Which frontmatter syntax a file used. */
export type FrontmatterKind = "yaml" | "json" | "none";

/** Why a frontmatter block could not be used. */
export interface FrontmatterError {
  /** `unclosed`: opened with `---` (or `{`) but no closing `---` line; `invalid`: YAML/JSON syntax error; `not-a-mapping`: parsed to a list or scalar. */
  kind: "unclosed" | "invalid" | "not-a-mapping";
  /** Human-readable, one line, names the line when known. */
  message: string;
  /** 1-based line in the file where the problem is, when known. */
  line?: number;
}

/** The result of {@link parseFrontmatter}. */
export interface FrontmatterResult {
  kind: FrontmatterKind;
  /** Parsed fields; `{}` when there is no usable frontmatter. Values keep their YAML/JSON types. */
  attributes: Record<string, unknown>;
  /** Text after the frontmatter block (LF line endings, BOM removed, not trimmed). */
  body: string;
  /** Present when a block was found but could not be used. */
  error?: FrontmatterError;
  /** True when the block's end was found, so `body` is exactly the text after it (even when `error` is set). */
  closed: boolean;
  /** The raw text between the delimiters (YAML) or before the closing `---` (JSON), when the block is closed. */
  source?: string;
}

/** Drops a leading UTF-8 BOM and turns CRLF and lone CR into LF. */
export function normalizeText(content: string): string {
  const withoutBom = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  return withoutBom.replace(/\r\n?/g, "\n");
}

const DELIMITER = /^---[ \t]*$/;

/** Index (in `lines`) of the first delimiter line after `from`, or -1. */
function findDelimiter(lines: string[], from: number): number {
  for (let index = from; index < lines.length; index++) {
    if (DELIMITER.test(lines[index])) return index;
  }
  return -1;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A closed block of `kind` that cannot be used: no attributes; `error` says why. */
function refused(kind: FrontmatterKind, body: string, source: string, error: FrontmatterError): FrontmatterResult {
  return { kind, attributes: {}, body, closed: true, source, error };
}

function firstLine(message: string): string {
  return message.split("\n")[0].trim();
}

/**
 * Splits a Markdown file into frontmatter attributes and body. Never throws; see the module contract for the accepted syntaxes.
 * @param content the raw file text (BOM and CRLF allowed)
 */
export function parseFrontmatter(content: string): FrontmatterResult {
  const text = normalizeText(content);
  const lines = text.split("\n");

  if (DELIMITER.test(lines[0])) {
    const end = findDelimiter(lines, 1);
    if (end === -1) {
      return {
        kind: "yaml",
        attributes: {},
        body: text,
        closed: false,
        error: { kind: "unclosed", message: "frontmatter opened with --- on line 1 is never closed by a --- line", line: 1 },
      };
    }
    const body = lines.slice(end + 1).join("\n");
    const source = lines.slice(1, end).join("\n");
    const document = yaml().parseDocument(source, { prettyErrors: true });
    if (document.errors.length > 0) {
      const error = document.errors[0];
      const line = error.linePos ? error.linePos[0].line + 1 : undefined;
      const where = line === undefined ? "" : ` at line ${line}`;
      const reason = firstLine(error.message).replace(/ at line \d+, column \d+:?$/, "");
      return refused("yaml", body, source, { kind: "invalid", message: `invalid YAML frontmatter${where}: ${reason}`, ...(line === undefined ? {} : { line }) });
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: 100 });
    } catch (error) {
      // yaml throws here for alias bombs ("Excessive alias count ...").
      const reason = error instanceof Error ? error.message : String(error);
      return refused("yaml", body, source, { kind: "invalid", message: `invalid YAML frontmatter: ${reason}`, line: 2 });
    }
    if (value === null || value === undefined) return { kind: "yaml", attributes: {}, body, closed: true, source };
    if (!isMapping(value)) {
      return refused("yaml", body, source, { kind: "not-a-mapping", message: `frontmatter must be a YAML mapping of keys to values, got ${Array.isArray(value) ? "a list" : typeof value}`, line: 2 });
    }
    return { kind: "yaml", attributes: value, body, closed: true, source };
  }

  if (text.startsWith("{")) {
    const end = findDelimiter(lines, 0);
    if (end === -1) return { kind: "none", attributes: {}, body: text, closed: false };
    const body = lines.slice(end + 1).join("\n");
    const source = lines.slice(0, end).join("\n");
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return refused("json", body, source, { kind: "invalid", message: `invalid JSON frontmatter before the --- on line ${end + 1}: ${reason}`, line: 1 });
    }
    if (!isMapping(value)) {
      return refused("json", body, source, { kind: "not-a-mapping", message: "JSON frontmatter must be an object", line: 1 });
    }
    return { kind: "json", attributes: value, body, closed: true, source };
  }

  return { kind: "none", attributes: {}, body: text, closed: false };
}

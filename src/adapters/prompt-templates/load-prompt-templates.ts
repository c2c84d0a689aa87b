/**
 * Loading prompt templates (`/name args` commands) from Markdown files.
 *
 * Contract (source: pi 0.73.1 `core/prompt-templates.ts`,
 * `docs/pi-parity.md`; differences are ours and marked):
 * - each path is a directory (its `*.md` files, **not** recursive, in name
 *   order; symlinks followed) or one `.md` file; `~` expands to the home
 *   directory, relative paths resolve against `process.cwd()`;
 * - name = file name without `.md`; content = body after the frontmatter,
 *   trimmed; description = frontmatter `description`, else the first non-empty
 *   body line (60 characters, then "..."); `argument-hint` kept as text;
 * - frontmatter as in `../frontmatter.ts` (YAML or the seed's JSON object, BOM
 *   and CRLF tolerated);
 * - **invalid frontmatter, when the body is still safe to use** (ours): if the
 *   block is closed by a `---` line but its YAML/JSON does not parse (e.g.
 *   `argument-hint: (optional shell: bash/zsh/fish)`), the template **loads**
 *   with a `frontmatter-invalid` warning. This is safe because the closing line
 *   fixes exactly where the body starts, and the frontmatter of a template is
 *   descriptive only (Arbor does not act on `allowed-tools` or `model`). Its
 *   fields are recovered line by line: each top-level `key: value` that parses
 *   on its own is kept, any other keeps its raw text as a string;
 * - if the block is **never closed**, the body's start is unknown (metadata
 *   would be sent to the model as prompt text), so the file is **skipped**
 *   with `frontmatter-unclosed` (pi would use the whole file as the body);
 * - a name with whitespace or an empty name cannot be typed as `/name`:
 *   skipped with `name-invalid`. Two templates with one name: the first wins,
 *   the later gets `name-collision` (pi keeps both and silently uses the first);
 * - a file that cannot be read, is over 1 MiB or is not UTF-8 is skipped
 *   (`read-failed`, `file-too-large`, `encoding-invalid`);
 * - never throws: every problem is a diagnostic.
 *
 * @example
 * ```ts
 * const { templates } = loadPromptTemplates(["~/.arbor/prompts", ".arbor/prompts"]);
 * ```
 */
import { readdirSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseDocument } from "yaml";
import { parseFrontmatter, readResourceFile, errorMessage, expandHome } from "../frontmatter.ts";
import type { LoadPromptTemplatesResult, PromptTemplate, PromptTemplateDiagnostic } from "./types.ts";

/**
 * Characters of the first body line used as a fallback description (pi).
 *
 * @example
 * ```ts
 * const description = firstLine.slice(0, DESCRIPTION_FALLBACK_LENGTH);
 * ```
 */
export const DESCRIPTION_FALLBACK_LENGTH = 60;

interface FileResult {
  template?: PromptTemplate;
  diagnostics: PromptTemplateDiagnostic[];
}


/** Recovers top-level fields from frontmatter that failed to parse as a whole. */
function recoverFields(source: string): Record<string, unknown> {
  const chunks: { key: string; lines: string[] }[] = [];
  for (const line of source.split("\n")) {
    const key = /^([A-Za-z0-9_][A-Za-z0-9_.-]*):(?:\s|$)/.exec(line)?.[1];
    if (key !== undefined) chunks.push({ key, lines: [line] });
    else if (chunks.length > 0 && (line === "" || /^\s/.test(line))) chunks[chunks.length - 1].lines.push(line);
  }
  const fields: Record<string, unknown> = {};
  for (const { key, lines } of chunks) {
    if (key in fields) continue;
    const document = parseDocument(lines.join("\n"));
    let value: unknown;
    try {
      value = document.errors.length === 0 ? document.toJS({ maxAliasCount: 100 }) : undefined;
    } catch {
      value = undefined; // alias bomb: keep the raw text
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value) && key in value) {
      fields[key] = (value as Record<string, unknown>)[key];
    } else {
      fields[key] = [lines[0].slice(key.length + 1), ...lines.slice(1)].join(" ").replace(/\s+/g, " ").trim();
    }
  }
  return fields;
}

function hintText(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return `[${value.map((item) => String(item)).join(", ")}]`;
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function loadTemplateFile(filePath: string): FileResult {
  const name = basename(filePath).replace(/\.md$/, "");
  const skip = (code: PromptTemplateDiagnostic["code"], message: string, line?: number): FileResult => ({
    diagnostics: [{ severity: "error", code, message, path: filePath, ...(line === undefined ? {} : { line }) }],
  });
  if (name === "" || /\s/.test(name)) return skip("name-invalid", `template name "${name}" is empty or contains whitespace, so /${name} cannot be typed; not loaded`);
  const read = readResourceFile(filePath);
  if (!read.ok) return skip(read.reason, `${read.message}; template not loaded`);
  const parsed = parseFrontmatter(read.text);
  const diagnostics: PromptTemplateDiagnostic[] = [];
  if (parsed.error?.kind === "unclosed") {
    return skip("frontmatter-unclosed", `${parsed.error.message}, so the body's start is unknown; not loaded`, parsed.error.line);
  }
  let attributes = parsed.attributes;
  if (parsed.error) {
    attributes = parsed.source === undefined ? {} : recoverFields(parsed.source);
    const recovered = Object.keys(attributes);
    diagnostics.push({
      severity: "warning",
      code: "frontmatter-invalid",
      message: `${parsed.error.message}; loaded with the body after the closing ---${recovered.length ? ` and fields recovered line by line (${recovered.join(", ")})` : ""}`,
      path: filePath,
      ...(parsed.error.line === undefined ? {} : { line: parsed.error.line }),
    });
  }
  const content = parsed.body.trim();
  let description = "";
  const rawDescription = attributes.description;
  if (typeof rawDescription === "string") description = rawDescription.replace(/\s+/g, " ").trim();
  else if (rawDescription !== undefined && rawDescription !== null) {
    diagnostics.push({
      severity: "warning",
      code: "description-invalid",
      message: `description must be a string, got ${Array.isArray(rawDescription) ? "a list" : typeof rawDescription}; using the first line instead`,
      path: filePath,
    });
  }
  if (!description) {
    const firstLine = content.split("\n").find((line) => line.trim() !== "");
    if (firstLine !== undefined) {
      description = firstLine.slice(0, DESCRIPTION_FALLBACK_LENGTH) + (firstLine.length > DESCRIPTION_FALLBACK_LENGTH ? "..." : "");
    }
  }
  const argumentHint = hintText(attributes["argument-hint"]);
  return {
    template: { name, description, ...(argumentHint === undefined ? {} : { argumentHint }), content, filePath, frontmatter: attributes },
    diagnostics,
  };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Loads prompt templates from directories (non-recursive) and `.md` files, in
 * the order given. Never throws; see the module contract.
 *
 * @param paths directories or `.md` files; `~` and relative paths allowed
 * @returns templates with unique names (first wins) and every diagnostic, in load order
 * @example
 * ```ts
 * const { templates, diagnostics } = loadPromptTemplates(["./prompts", "./extra/review.md"]);
 * templates.map((template) => template.name); // ["fix", "review"]
 * ```
 */
export function loadPromptTemplates(paths: readonly string[]): LoadPromptTemplatesResult {
  const results: FileResult[] = [];
  for (const given of paths) {
    const path = resolve(expandHome(given.trim()));
    let stats;
    try {
      stats = statSync(path);
    } catch {
      results.push({ diagnostics: [{ severity: "error", code: "path-missing", message: "prompt template path does not exist", path }] });
      continue;
    }
    if (stats.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(path).sort();
      } catch (error) {
        results.push({ diagnostics: [{ severity: "error", code: "read-failed", message: `cannot read directory: ${errorMessage(error)}`, path }] });
        continue;
      }
      for (const name of names) {
        const filePath = join(path, name);
        if (name.endsWith(".md") && isFile(filePath)) results.push(loadTemplateFile(filePath));
      }
    } else if (stats.isFile() && path.endsWith(".md")) {
      results.push(loadTemplateFile(path));
    } else {
      results.push({ diagnostics: [{ severity: "error", code: "path-unsupported", message: "prompt template path is neither a directory nor a .md file", path }] });
    }
  }

  const templates: PromptTemplate[] = [];
  const diagnostics: PromptTemplateDiagnostic[] = [];
  const byName = new Map<string, PromptTemplate>();
  for (const result of results) {
    diagnostics.push(...result.diagnostics);
    const template = result.template;
    if (!template) continue;
    const winner = byName.get(template.name);
    if (winner) {
      if (winner.filePath === template.filePath) continue;
      diagnostics.push({
        severity: "error",
        code: "name-collision",
        message: `template name "${template.name}" is already taken by ${winner.filePath}; this one is not loaded`,
        path: template.filePath,
        collision: { name: template.name, winnerPath: winner.filePath, loserPath: template.filePath },
      });
      continue;
    }
    byName.set(template.name, template);
    templates.push(template);
  }
  return { templates, diagnostics };
}

/**
 * Loading prompt templates from Markdown files (a directory's `*.md`, not recursive, in name order, or one file). Name = file name; description =
 * frontmatter or the first body line. Invalid but closed frontmatter loads with a warning (the body start is certain); unclosed frontmatter, bad
 * names, unreadable, oversized or non-UTF-8 files are skipped with a diagnostic; the first of two same-named templates wins. Never throws.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type * as Yaml from "yaml";
import { errorMessage, nameCollision, parseFrontmatter, readResourceFile, statGivenPath } from "../frontmatter.ts";
import type { LoadPromptTemplatesResult, PromptTemplate, PromptTemplateDiagnostic } from "./types.ts";
import { lazyRequire } from "../../core/lazy-require.ts";

const yaml = lazyRequire<typeof Yaml>("yaml");

/**
 * Characters of the first body line used as a fallback description (pi).
 * @example
 * const description = firstLine.slice(0, DESCRIPTION_FALLBACK_LENGTH);
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
    const document = yaml().parseDocument(lines.join("\n"));
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
 * Loads prompt templates from directories (non-recursive) and `.md` files, in the order given. Never throws; see the module contract.
 * @param paths directories or `.md` files; `~` and relative paths allowed
 * @returns templates with unique names (first wins) and every diagnostic, in load order
 * @example
 * const { templates, diagnostics } = loadPromptTemplates(["./prompts", "./extra/review.md"]);
 * templates.map((template) => template.name); // ["fix", "review"]
 */
export function loadPromptTemplates(paths: readonly string[]): LoadPromptTemplatesResult {
  const results: FileResult[] = [];
  for (const given of paths) {
    const { path, stats } = statGivenPath(given);
    if (!stats) {
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
      diagnostics.push(nameCollision("template", template, winner.filePath));
      continue;
    }
    byName.set(template.name, template);
    templates.push(template);
  }
  return { templates, diagnostics };
}

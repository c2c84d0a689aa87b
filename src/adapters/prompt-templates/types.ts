/**
 * Prompt template types: what `loadPromptTemplates` returns. A {@link PromptTemplate} is an immutable snapshot of one `.md` file; a diagnostic's
 * `severity: "error"` means the file was not loaded, `"warning"` that it was loaded anyway.
 * @example
 * const { templates, diagnostics } = loadPromptTemplates([".arbor/prompts"]);
 */

/** One loaded prompt template, invoked as `/name args`. */
export interface PromptTemplate {
  /** The file name without `.md` (pi). */
  name: string;
  /** Frontmatter `description`, else the first non-empty body line cut to 60 characters plus "..." (pi). */
  description: string;
  /** Frontmatter `argument-hint` as text. A YAML list (an unquoted `[file_path]`) is turned back into `[file_path]` (ours). */
  argumentHint?: string;
  /** The body after the frontmatter, trimmed, LF line endings; placeholders not yet substituted. */
  content: string;
  /** Absolute path of the file. */
  filePath: string;
  /** Every frontmatter field as parsed (Claude Code keys such as `allowed-tools` and `model` are kept, not acted on). */
  frontmatter: Record<string, unknown>;
}

/**
 * Stable diagnostic codes. Errors (file skipped): `frontmatter-unclosed`, `name-invalid`, `name-collision`, `read-failed`, `file-too-large` (over 1
 * MiB), `encoding-invalid` (not UTF-8), `path-missing`, `path-unsupported`. Warnings (loaded): `frontmatter-invalid`, `description-invalid`.
 */
export type PromptTemplateDiagnosticCode =
  | "frontmatter-invalid"
  | "frontmatter-unclosed"
  | "description-invalid"
  | "name-invalid"
  | "name-collision"
  | "read-failed"
  | "file-too-large"
  | "encoding-invalid"
  | "path-missing"
  | "path-unsupported";

/** A problem found while loading prompt templates. */
export interface PromptTemplateDiagnostic {
  severity: "error" | "warning";
  code: PromptTemplateDiagnosticCode;
  /** One line for humans; names the field or value. */
  message: string;
  /** Absolute path of the file or directory concerned. */
  path: string;
  /** 1-based line in the file, when known. */
  line?: number;
  /** For `name-collision`: the file that kept the name (the first found) and the one that lost. */
  collision?: { name: string; winnerPath: string; loserPath: string };
}

/** What {@link import("./load-prompt-templates.ts").loadPromptTemplates} returns. */
export interface LoadPromptTemplatesResult {
  /** Loaded templates with unique names, in load order (paths in the order given, files sorted by name within a directory). */
  templates: PromptTemplate[];
  diagnostics: PromptTemplateDiagnostic[];
}

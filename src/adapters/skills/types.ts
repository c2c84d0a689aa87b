/**
 * Skill types: what `loadSkills` returns. A {@link Skill} is an immutable snapshot of one SKILL.md; every problem is a {@link SkillDiagnostic} with a
 * stable `code` (`error`: not loaded, `warning`: loaded anyway, `info`: deliberately passed over).
 * @example
 * const { skills, diagnostics } = loadSkills(["./skills"]);
 */

/** One loaded skill. */
export interface Skill {
  /** The frontmatter `name`, else the parent directory's name (pi). May break the naming rules (then a warning was reported). */
  name: string;
  /** The description with every whitespace run collapsed to one space and trimmed (ours; the raw value is in `frontmatter.description`). */
  description: string;
  /** Absolute path of the SKILL.md (or root-level `.md`) file. */
  filePath: string;
  /** Absolute directory that relative references in the body resolve against (the file's directory). */
  baseDir: string;
  /** The Markdown body after the frontmatter, trimmed, LF line endings. */
  body: string;
  /** `disable-model-invocation: true`: left out of the system-prompt catalog, still invocable as `/skill:name` (pi). */
  disableModelInvocation: boolean;
  /** Every frontmatter field as parsed (unknown keys kept for applications). */
  frontmatter: Record<string, unknown>;
}

/**
 * Stable diagnostic codes. Errors (file skipped): `frontmatter-missing`, `frontmatter-unclosed`, `frontmatter-invalid`, `description-missing`,
 * `description-invalid`, `name-collision` (the later skill of that name), `read-failed`, `file-too-large` (over 1 MiB), `encoding-invalid` (not
 * UTF-8), `path-missing`, `path-unsupported`. Warnings (loaded): `name-mismatch`, `name-too-long`, `name-invalid-chars`, `name-hyphen-edge`,
 * `name-consecutive-hyphens`, `name-invalid`, `description-too-long`, `disable-model-invocation-invalid`. Info (nothing wrong, a file was
 * deliberately not loaded): `nested-skill-ignored`.
 */
export type SkillDiagnosticCode =
  | "frontmatter-missing"
  | "frontmatter-unclosed"
  | "frontmatter-invalid"
  | "description-missing"
  | "description-invalid"
  | "description-too-long"
  | "name-mismatch"
  | "name-too-long"
  | "name-invalid-chars"
  | "name-hyphen-edge"
  | "name-consecutive-hyphens"
  | "name-invalid"
  | "disable-model-invocation-invalid"
  | "name-collision"
  | "read-failed"
  | "file-too-large"
  | "encoding-invalid"
  | "path-missing"
  | "path-unsupported"
  | "nested-skill-ignored";

/** A problem found while loading skills. */
export interface SkillDiagnostic {
  /** `error`: the file was not loaded; `warning`: it was loaded anyway; `info`: a file was deliberately not loaded by the discovery rules. */
  severity: "error" | "warning" | "info";
  code: SkillDiagnosticCode;
  /** One line for humans; names the offending field or value. */
  message: string;
  /** Absolute path of the file or directory concerned. */
  path: string;
  /** 1-based line in the file, when known. */
  line?: number;
  /** For `name-collision`: which file kept the name (the first found) and which lost. */
  collision?: { name: string; winnerPath: string; loserPath: string };
}

/** What {@link import("./load-skills.ts").loadSkills} returns. */
export interface LoadSkillsResult {
  /** Loaded skills, in discovery order (roots in the order given, entries sorted by name within a directory). */
  skills: Skill[];
  diagnostics: SkillDiagnostic[];
}

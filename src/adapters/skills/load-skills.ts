/**
 * Skill discovery and loading from directories of SKILL.md files (pi's rules, `docs/pi-parity.md`). A directory holding `SKILL.md` is one skill and
 * is not walked further; walks skip dot names, `node_modules` and ignored files, in name order; only `SKILL.md` and explicit `.md` paths are skills.
 * Never throws: bad files are `error` diagnostics (not loaded), doubtful fields `warning`s; the first of two same-named skills wins.
 */
import { existsSync, readdirSync, realpathSync, statSync, type Dirent } from "node:fs";
import { basename, dirname, join } from "node:path";
import { errorMessage, nameCollision, parseFrontmatter, readResourceFile, statGivenPath } from "../frontmatter.ts";
import { IgnoreRules } from "./ignore-rules.ts";
import type { LoadSkillsResult, Skill, SkillDiagnostic } from "./types.ts";
import { ignored } from "../../core/ignored.ts";

/**
 * Longest valid skill name, in characters (Agent Skills).
 * @example
 * const valid = /^[a-z0-9-]+$/.test(name) && name.length <= MAX_SKILL_NAME_LENGTH;
 */
export const MAX_SKILL_NAME_LENGTH = 64;
/**
 * Longest valid description, in characters (Agent Skills).
 * @example
 * const tooLong = description.length > MAX_SKILL_DESCRIPTION_LENGTH; // 1024
 */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;
const SKILL_FILE = "SKILL.md";

/** Options of {@link loadSkills}. */
export interface LoadSkillsOptions {
  /** Load `*.md` files directly inside each walked root as skills (pi's behaviour for its own skill folders). Default false: only `SKILL.md` files and explicitly given files are skills. */
  includeRootFiles?: boolean;
}

interface FileResult {
  skill?: Skill;
  diagnostics: SkillDiagnostic[];
}


/** Validates a name against the Agent Skills rules; returns warnings. */
function nameWarnings(name: string, expected: string, path: string): SkillDiagnostic[] {
  const warnings: SkillDiagnostic[] = [];
  const warn = (code: SkillDiagnostic["code"], message: string) => warnings.push({ severity: "warning", code, message, path });
  if (name !== expected) warn("name-mismatch", `name "${name}" does not match the directory "${expected}"`);
  if (name.length > MAX_SKILL_NAME_LENGTH) warn("name-too-long", `name is ${name.length} characters, over the ${MAX_SKILL_NAME_LENGTH} allowed`);
  if (!/^[a-z0-9-]+$/.test(name)) warn("name-invalid-chars", `name "${name}" may only contain lowercase a-z, 0-9 and hyphens`);
  if (name.startsWith("-") || name.endsWith("-")) warn("name-hyphen-edge", `name "${name}" must not start or end with a hyphen`);
  if (name.includes("--")) warn("name-consecutive-hyphens", `name "${name}" must not contain consecutive hyphens`);
  return warnings;
}

/** Loads one skill file; `expectedName` (directory name or file stem) is the fallback name and what the name must equal. */
function loadSkillFile(filePath: string, expectedName: string): FileResult {
  const read = readResourceFile(filePath);
  if (!read.ok) return { diagnostics: [{ severity: "error", code: read.reason, message: `${read.message}; skill not loaded`, path: filePath }] };
  const parsed = parseFrontmatter(read.text);
  const skip = (code: SkillDiagnostic["code"], message: string, line?: number): FileResult => ({
    diagnostics: [{ severity: "error", code, message, path: filePath, ...(line === undefined ? {} : { line }) }],
  });
  if (parsed.error?.kind === "unclosed") return skip("frontmatter-unclosed", `${parsed.error.message}; skill not loaded`, parsed.error.line);
  if (parsed.error) return skip("frontmatter-invalid", `${parsed.error.message}; skill not loaded`, parsed.error.line);
  if (parsed.kind === "none") return skip("frontmatter-missing", "no frontmatter: a skill needs a --- block with a description; skill not loaded", 1);

  const attributes = parsed.attributes;
  const diagnostics: SkillDiagnostic[] = [];
  const rawDescription = attributes.description;
  if (rawDescription === undefined || rawDescription === null) return skip("description-missing", "description is required; skill not loaded");
  if (typeof rawDescription !== "string") {
    return skip("description-invalid", `description must be a string, got ${Array.isArray(rawDescription) ? "a list" : typeof rawDescription}; skill not loaded`);
  }
  if (rawDescription.trim() === "") return skip("description-missing", "description is blank; skill not loaded");
  if (rawDescription.length > MAX_SKILL_DESCRIPTION_LENGTH) {
    diagnostics.push({
      severity: "warning",
      code: "description-too-long",
      message: `description is ${rawDescription.length} characters, over the ${MAX_SKILL_DESCRIPTION_LENGTH} allowed`,
      path: filePath,
    });
  }

  let name = expectedName;
  const rawName = attributes.name;
  if (typeof rawName === "string" && rawName !== "") name = rawName;
  else if (rawName !== undefined && rawName !== null && rawName !== "") {
    diagnostics.push({ severity: "warning", code: "name-invalid", message: `name must be a string, got ${typeof rawName}; using "${expectedName}"`, path: filePath });
  }
  diagnostics.push(...nameWarnings(name, expectedName, filePath));

  const disable = attributes["disable-model-invocation"];
  if (disable !== undefined && typeof disable !== "boolean") {
    diagnostics.push({
      severity: "warning",
      code: "disable-model-invocation-invalid",
      message: `disable-model-invocation must be true or false, got ${JSON.stringify(disable)}; treated as false`,
      path: filePath,
    });
  }

  return {
    skill: {
      name,
      description: rawDescription.replace(/\s+/g, " ").trim(),
      filePath,
      baseDir: dirname(filePath),
      body: parsed.body.trim(),
      disableModelInvocation: disable === true,
      frontmatter: attributes,
    },
    diagnostics,
  };
}

/** Follows a symlinked entry; undefined for a broken link. */
function entryKind(dir: string, entry: Dirent): { isFile: boolean; isDirectory: boolean } | undefined {
  if (!entry.isSymbolicLink()) return { isFile: entry.isFile(), isDirectory: entry.isDirectory() };
  try {
    const stats = statSync(join(dir, entry.name));
    return { isFile: stats.isFile(), isDirectory: stats.isDirectory() };
  } catch {
    return undefined;
  }
}

interface Walk {
  results: FileResult[];
  visitedDirs: Set<string>;
  includeRootFiles: boolean;
}

function walk(dir: string, rules: IgnoreRules, isRoot: boolean, state: Walk): void {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return;
  }
  if (state.visitedDirs.has(real)) return;
  state.visitedDirs.add(real);

  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (error) {
    state.results.push({ diagnostics: [{ severity: "error", code: "read-failed", message: `cannot read directory: ${errorMessage(error)}`, path: dir }] });
    return;
  }

  const skillEntry = entries.find((entry) => entry.name === SKILL_FILE);
  if (skillEntry && entryKind(dir, skillEntry)?.isFile && !rules.ignores(join(dir, SKILL_FILE), false)) {
    state.results.push(loadSkillFile(join(dir, SKILL_FILE), basename(dir)));
    for (const entry of entries) {
      const nested = join(dir, entry.name, SKILL_FILE);
      if (entry.name.startsWith(".") || entry.name === "node_modules" || !entryKind(dir, entry)?.isDirectory) continue;
      if (!existsSync(nested) || rules.ignores(join(dir, entry.name), true)) continue;
      state.results.push({
        diagnostics: [{ severity: "info", code: "nested-skill-ignored", message: `not loaded: ${dir} is already a skill, so its subdirectories are not searched`, path: nested }],
      });
    }
    return;
  }

  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const fullPath = join(dir, entry.name);
    const kind = entryKind(dir, entry);
    if (!kind || rules.ignores(fullPath, kind.isDirectory)) continue;
    if (kind.isDirectory) {
      walk(fullPath, rules.enter(fullPath), false, state);
    } else if (kind.isFile && isRoot && state.includeRootFiles && entry.name.endsWith(".md")) {
      state.results.push(loadSkillFile(fullPath, entry.name.slice(0, -".md".length)));
    }
  }
}

/**
 * Discovers and loads skills from directories (or single `.md` files), in the order given. Never throws; see the module contract for the rules.
 * @param paths directories to walk or `.md` files; `~` and relative paths allowed
 * @returns the loaded skills (unique names, first found wins) and every diagnostic, in discovery order
 * @example
 * const { skills } = loadSkills(["/repo/.arbor/skills"]);
 * skills.map((skill) => skill.name); // ["pdf-tools", "release-notes"]
 */
export function loadSkills(paths: readonly string[], options: LoadSkillsOptions = {}): LoadSkillsResult {
  const state: Walk = { results: [], visitedDirs: new Set(), includeRootFiles: options.includeRootFiles ?? false };
  for (const given of paths) {
    const { path, stats } = statGivenPath(given);
    if (!stats) {
      state.results.push({ diagnostics: [{ severity: "error", code: "path-missing", message: "skill path does not exist", path }] });
      continue;
    }
    if (stats.isDirectory()) {
      walk(path, IgnoreRules.root(path), true, state);
    } else if (stats.isFile() && path.endsWith(".md")) {
      const expected = basename(path) === SKILL_FILE ? basename(dirname(path)) : basename(path).slice(0, -".md".length);
      state.results.push(loadSkillFile(path, expected));
    } else {
      state.results.push({ diagnostics: [{ severity: "error", code: "path-unsupported", message: "skill path is neither a directory nor a .md file", path }] });
    }
  }

  const skills: Skill[] = [];
  const diagnostics: SkillDiagnostic[] = [];
  const byName = new Map<string, Skill>();
  const realPaths = new Set<string>();
  for (const result of state.results) {
    diagnostics.push(...result.diagnostics);
    const skill = result.skill;
    if (!skill) continue;
    let real = skill.filePath;
    try {
      real = realpathSync(skill.filePath);
    } catch (error) {
      ignored("a skill file has no realpath; its path is kept as given", error);
    }
    if (realPaths.has(real)) continue;
    realPaths.add(real);
    const winner = byName.get(skill.name);
    if (winner) {
      diagnostics.push(nameCollision("skill", skill, winner.filePath));
      continue;
    }
    byName.set(skill.name, skill);
    skills.push(skill);
  }
  return { skills, diagnostics };
}

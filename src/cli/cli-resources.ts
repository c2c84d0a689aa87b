/**
 * The skills, prompt templates and context files the CLI's model commands load, from project folders before global ones and Arbor's before pi's
 * (the first of a name wins), with every load problem as one `path: message` line; `failedName(name)` explains a command that failed to load.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { loadPromptTemplates } from "../adapters/prompt-templates/load-prompt-templates.ts";
import type { PromptTemplate } from "../adapters/prompt-templates/types.ts";
import { loadSkills } from "../adapters/skills/load-skills.ts";
import type { Skill } from "../adapters/skills/types.ts";
import { defaultAgentDir, loadContextFiles, type ContextFile } from "../harness/context-files.ts";

/** What {@link loadCliResources} found. */
export interface CliResources {
  skills: Skill[];
  promptTemplates: PromptTemplate[];
  contextFiles: ContextFile[];
  /** Problems, one line each (`path: message`). */
  diagnostics: string[];
  /** The `/commands` these expand: `skill:<name>` per skill, and each template's name. */
  slashCommands: string[];
  /** For a typed `/skill:name` or `/name` (without the slash): why a file of that name did not load, if one did not. */
  failedName(command: string): string | undefined;
}

/** pi's global agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export function piAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.PI_CODING_AGENT_DIR;
  if (given) return given === "~" ? homedir() : given.startsWith("~/") ? join(homedir(), given.slice(2)) : resolve(given);
  return join(homedir(), ".pi", "agent");
}

/** Loads the CLI's resources for `cwd`; `contextFiles: false` leaves the context files out. */
export function loadCliResources(cwd: string, options: { contextFiles?: boolean; env?: NodeJS.ProcessEnv } = {}): CliResources {
  const env = options.env ?? process.env;
  const arborGlobal = defaultAgentDir(env);
  const piGlobal = piAgentDir(env);
  const skillPaths = [join(cwd, ".arbor", "skills"), join(cwd, ".pi", "skills"), join(cwd, ".agents", "skills"), join(arborGlobal, "skills"), join(piGlobal, "skills")].filter((path) => existsSync(path));
  const templatePaths = [join(cwd, ".arbor", "prompts"), join(cwd, ".pi", "prompts"), join(arborGlobal, "prompts"), join(piGlobal, "prompts")].filter((path) => existsSync(path));
  const skills = skillPaths.length > 0 ? loadSkills(skillPaths) : { skills: [], diagnostics: [] };
  const templates = templatePaths.length > 0 ? loadPromptTemplates(templatePaths) : { templates: [], diagnostics: [] };
  const contextFiles: ContextFile[] = [];
  if (options.contextFiles !== false) {
    const seen = new Set<string>();
    for (const file of [...loadContextFiles({ cwd, agentDir: arborGlobal }), ...loadContextFiles({ cwd, agentDir: piGlobal })]) {
      if (seen.has(file.path)) continue;
      seen.add(file.path);
      contextFiles.push(file);
    }
    // Globals first, then the folders from the root down (each loader returns its global first).
    contextFiles.sort((a, b) => rank(a.path) - rank(b.path));
  }
  function rank(path: string): number {
    return dirname(path) === arborGlobal ? 0 : dirname(path) === piGlobal ? 1 : 2;
  }
  const problems = [
    ...skills.diagnostics.filter((item) => item.severity !== "info").map((item) => ({ kind: "skill" as const, severity: item.severity, path: item.path, message: item.message })),
    ...templates.diagnostics.map((item) => ({ kind: "template" as const, severity: item.severity, path: item.path, message: item.message })),
  ];
  const loadedSkills = new Set(skills.skills.map((skill) => skill.name));
  const loadedTemplates = new Set(templates.templates.map((template) => template.name));
  return {
    skills: skills.skills,
    promptTemplates: templates.templates,
    contextFiles,
    diagnostics: problems.map((item) => `${item.severity === "error" ? "not loaded" : "warning"}: ${item.path}: ${item.message}`),
    slashCommands: [...skills.skills.map((skill) => `skill:${skill.name}`), ...templates.templates.map((template) => template.name)],
    failedName(command) {
      const skillName = command.startsWith("skill:") ? command.slice("skill:".length) : undefined;
      if (skillName !== undefined && loadedSkills.has(skillName)) return undefined;
      if (skillName === undefined && loadedTemplates.has(command)) return undefined;
      const failed = problems.find((item) =>
        item.severity === "error" &&
        (skillName !== undefined
          ? item.kind === "skill" && (basename(dirname(item.path)) === skillName || basename(item.path) === skillName || basename(item.path) === `${skillName}.md`)
          : item.kind === "template" && basename(item.path) === `${command}.md`),
      );
      return failed ? `${failed.path}: ${failed.message}` : undefined;
    },
  };
}

/**
 * Skills: loading SKILL.md files and formatting them for the model.
 * See `load-skills.ts` and `format-skills.ts` for the contracts, and
 * docs/skills-and-templates.md for the guide.
 *
 * @example
 * ```ts
 * import { loadSkills, formatSkillsForSystemPrompt } from "./adapters/skills/index.ts";
 * const { skills } = loadSkills([".arbor/skills"]);
 * const catalog = formatSkillsForSystemPrompt(skills);
 * ```
 */
export * from "./types.ts";
export * from "./load-skills.ts";
export * from "./format-skills.ts";

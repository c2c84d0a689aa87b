/**
 * Skills: loading SKILL.md files and formatting them for the model. See `load-skills.ts` and `format-skills.ts` for the contracts, and
 * docs/skills-and-templates.md for the guide.
 */
export * from "./types.ts";
export * from "./load-skills.ts";
export * from "./format-skills.ts";

/**
 * `arbor-agent/resources`: Skills (Agent Skills `SKILL.md`) and prompt templates (slash commands), as pi loads and expands them.
 * @example
 * import { loadSkills, loadPromptTemplates } from "arbor-agent/resources";
 */
export {
  loadSkills,
  MAX_SKILL_NAME_LENGTH,
  MAX_SKILL_DESCRIPTION_LENGTH,
  type LoadSkillsOptions,
} from "../adapters/skills/load-skills.ts";
export {
  formatSkillsForSystemPrompt,
  formatSkillInvocation,
} from "../adapters/skills/format-skills.ts";
export {
  type Skill,
  type SkillDiagnosticCode,
  type SkillDiagnostic,
  type LoadSkillsResult,
} from "../adapters/skills/types.ts";
export {
  loadPromptTemplates,
  DESCRIPTION_FALLBACK_LENGTH,
} from "../adapters/prompt-templates/load-prompt-templates.ts";
export {
  formatPromptTemplateInvocation,
  expandSlashCommand,
  type SlashCommandExpansion,
  type SlashCommandResources,
} from "../adapters/prompt-templates/expand.ts";
export {
  parseCommandArgs,
  substituteArgs,
} from "../adapters/prompt-templates/arguments.ts";
export {
  type PromptTemplate,
  type PromptTemplateDiagnosticCode,
  type PromptTemplateDiagnostic,
  type LoadPromptTemplatesResult,
} from "../adapters/prompt-templates/types.ts";

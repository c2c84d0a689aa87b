/**
 * Slash-command expansion of user input: `/skill:name args` (looked up first) and `/name args` (prompt templates). Any whitespace ends the name; an
 * unknown command comes back unchanged with `kind: "none"`. Pure and synchronous; never throws.
 */
import { formatSkillInvocation } from "../skills/format-skills.ts";
import type { Skill } from "../skills/types.ts";
import { parseCommandArgs, substituteArgs } from "./arguments.ts";
import type { PromptTemplate } from "./types.ts";

/** The result of {@link expandSlashCommand}: the text to send, and what produced it. */
export type SlashCommandExpansion =
  | { kind: "none"; text: string }
  | { kind: "template"; text: string; template: PromptTemplate; args: string[] }
  | { kind: "skill"; text: string; skill: Skill; args: string };

/** What {@link expandSlashCommand} may expand. */
export interface SlashCommandResources {
  templates?: readonly PromptTemplate[];
  skills?: readonly Skill[];
}

/**
 * Expands a template for an argument string: `parseCommandArgs` then `substituteArgs`.
 * @param template a loaded template
 * @param argsString the text after `/name`
 * @example
 * formatPromptTemplateInvocation({ ...template, content: "Review $1 for ${2:-bugs}" }, "app.ts");
 * // "Review app.ts for bugs"
 */
export function formatPromptTemplateInvocation(template: PromptTemplate, argsString: string): string {
  return substituteArgs(template.content, parseCommandArgs(argsString));
}

/**
 * Expands `/skill:name args` or `/template args` at the start of `text`; any other text comes back unchanged as `kind: "none"`.
 * @param text the user's input
 * @param resources the loaded templates and skills
 * @example
 * expandSlashCommand("/skill:pdf extract tables", { skills }).text; // '<skill name="pdf" ...>...</skill>\n\nextract tables'
 */
export function expandSlashCommand(text: string, resources: SlashCommandResources): SlashCommandExpansion {
  const match = /^\/(\S+)(?:\s([\s\S]*))?$/.exec(text);
  if (!match) return { kind: "none", text };
  const [, name, rest = ""] = match;
  if (name.startsWith("skill:")) {
    const skillName = name.slice("skill:".length);
    const skill = resources.skills?.find((candidate) => candidate.name === skillName);
    if (skill) return { kind: "skill", text: formatSkillInvocation(skill, rest), skill, args: rest.trim() };
  }
  const template = resources.templates?.find((candidate) => candidate.name === name);
  if (!template) return { kind: "none", text };
  const args = parseCommandArgs(rest);
  return { kind: "template", text: substituteArgs(template.content, args), template, args };
}

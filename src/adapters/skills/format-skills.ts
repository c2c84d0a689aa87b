/**
 * Skill text for the model: the system-prompt catalog (pi's text byte for byte, XML-escaped, skills with `disableModelInvocation` left out) and
 * `/skill:name` invocations (`<skill name location>` with the body and trimmed arguments). Pure: the body was read at load time.
 */
import type { Skill } from "./types.ts";

/** XML-escapes `& < > " '` (pi's escaping). */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/**
 * The skills catalog to append to a system prompt, or `""` when no skill may be invoked by the model. Order follows `skills`.
 * @param skills loaded skills (from `loadSkills`)
 * @returns text starting with two newlines, or `""`
 * @example
 * formatSkillsForSystemPrompt([{ name: "pdf", description: "Read PDFs", filePath: "/s/pdf/SKILL.md", ... }]);
 * // "\n\nThe following skills provide specialized instructions ...\n<available_skills>\n  <skill>\n    <name>pdf</name> ..."
 */
export function formatSkillsForSystemPrompt(skills: readonly Skill[]): string {
  const visible = skills.filter((skill) => !skill.disableModelInvocation);
  if (visible.length === 0) return "";
  const lines = [
    "\n\nThe following skills provide specialized instructions for specific tasks.",
    "Use the read tool to load a skill's file when the task matches its description.",
    "When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
    "",
    "<available_skills>",
  ];
  for (const skill of visible) {
    lines.push("  <skill>");
    lines.push(`    <name>${escapeXml(skill.name)}</name>`);
    lines.push(`    <description>${escapeXml(skill.description)}</description>`);
    lines.push(`    <location>${escapeXml(skill.filePath)}</location>`);
    lines.push("  </skill>");
  }
  lines.push("</available_skills>");
  return lines.join("\n");
}

/**
 * The user-message text that `/skill:name args` becomes. Works for every skill, including `disableModelInvocation` ones (that flag only hides a skill
 * from the catalog).
 * @param skill the invoked skill
 * @param args the text after the command name; trimmed, omitted when empty
 * @example
 * formatSkillInvocation(skill, "fix the flaky test");
 * // '<skill name="debug" location="/s/debug/SKILL.md">\nReferences are relative to /s/debug.\n\n# Debug...\n</skill>\n\nfix the flaky test'
 */
export function formatSkillInvocation(skill: Skill, args = ""): string {
  const block =
    `<skill name="${escapeXml(skill.name)}" location="${escapeXml(skill.filePath)}">\n` +
    `References are relative to ${skill.baseDir}.\n\n${skill.body}\n</skill>`;
  const trimmed = args.trim();
  return trimmed ? `${block}\n\n${trimmed}` : block;
}

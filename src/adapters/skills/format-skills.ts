/**
 * Skill text for the model: the system-prompt catalog and `/skill:name` invocations.
 *
 * Contract (source: pi 0.73.1 `formatSkillsForPrompt` and
 * `AgentSession._expandSkillCommand`, `docs/pi-parity.md`):
 * - the catalog is pi's text byte for byte: a leading blank line, pi's three
 *   instruction lines, then `<available_skills>` with one `<skill>` per visible
 *   skill (`<name>`, `<description>`, `<location>` = absolute file path), values
 *   XML-escaped (`& < > " '`). Skills with `disableModelInvocation` are left out;
 *   with none left the catalog is `""`. Ours: the description is the loader's
 *   single-line form (pi keeps YAML block-scalar newlines);
 * - the caller decides whether to add the catalog (pi adds it only when the
 *   `read` tool is active, since the model loads a skill by reading its file);
 * - an invocation is `<skill name=".." location="..">`, the line
 *   `References are relative to <baseDir>.`, a blank line, the body, `</skill>`;
 *   non-empty trimmed arguments follow after a blank line (pi). Ours: the
 *   attribute values are XML-escaped (pi inserts them raw);
 * - pure functions: no file access (the body was read at load time).
 *
 * @example
 * ```ts
 * const systemPrompt = basePrompt + formatSkillsForSystemPrompt(skills);
 * const userText = formatSkillInvocation(skills[0], "summarize README.md");
 * ```
 */
import type { Skill } from "./types.ts";

/**
 * XML-escapes `& < > " '` (pi's escaping).
 *
 * @example
 * ```ts
 * escapeXml(`a<b & "c"`); // "a&lt;b &amp; &quot;c&quot;"
 * ```
 */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/**
 * The skills catalog to append to a system prompt, or `""` when no skill may be
 * invoked by the model. Order follows `skills`.
 *
 * @param skills loaded skills (from `loadSkills`)
 * @returns text starting with two newlines, or `""`
 * @example
 * ```ts
 * formatSkillsForSystemPrompt([{ name: "pdf", description: "Read PDFs", filePath: "/s/pdf/SKILL.md", ... }]);
 * // "\n\nThe following skills provide specialized instructions ...\n<available_skills>\n  <skill>\n    <name>pdf</name> ..."
 * ```
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
 * The user-message text that `/skill:name args` becomes. Works for every
 * skill, including `disableModelInvocation` ones (that flag only hides a skill
 * from the catalog).
 *
 * @param skill the invoked skill
 * @param args the text after the command name; trimmed, omitted when empty
 * @example
 * ```ts
 * formatSkillInvocation(skill, "fix the flaky test");
 * // '<skill name="debug" location="/s/debug/SKILL.md">\nReferences are relative to /s/debug.\n\n# Debug...\n</skill>\n\nfix the flaky test'
 * ```
 */
export function formatSkillInvocation(skill: Skill, args = ""): string {
  const block =
    `<skill name="${escapeXml(skill.name)}" location="${escapeXml(skill.filePath)}">\n` +
    `References are relative to ${skill.baseDir}.\n\n${skill.body}\n</skill>`;
  const trimmed = args.trim();
  return trimmed ? `${block}\n\n${trimmed}` : block;
}

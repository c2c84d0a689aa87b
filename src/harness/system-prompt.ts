/**
 * The system prompt of a harness run, in pi's layout: a string option, then `# Project Context`, the skills catalog (when `read` is active), the
 * date and cwd lines (byte-identical to pi 0.73.1). A function option owns the whole prompt (a non-string return throws `HarnessConfigError`); no
 * option gives Arbor's short default plus the same sections. Local date.
 */
import { formatSkillsForSystemPrompt } from "../adapters/skills/format-skills.ts";
import type { Skill } from "../adapters/skills/types.ts";
import { HarnessConfigError } from "../core/errors.ts";
import { formatContextFiles, type ContextFile } from "./context-files.ts";
import type { SystemPromptContext } from "./options.ts";

/** Input of {@link buildSystemPrompt}. */
export interface BuildSystemPromptInput {
  systemPrompt?: string | ((context: SystemPromptContext) => string);
  /** The active tools, in order. */
  tools: { name: string; description: string }[];
  skills: readonly Skill[];
  cwd: string;
  /** Project context files (AGENTS.md / CLAUDE.md), in order; see `context-files.ts`. */
  contextFiles?: readonly ContextFile[];
  /** Default: now. */
  now?: Date;
}

/** Formats a date as `YYYY-MM-DD` in local time (pi's format). */
export function localDate(now: Date): string {
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
}

function defaultPrompt(tools: BuildSystemPromptInput["tools"]): string {
  const list = tools.length ? tools.map((tool) => `- ${tool.name}: ${tool.description.split("\n")[0].trim()}`).join("\n") : "(none)";
  return [
    "You are a capable assistant running inside Arbor, an agent runtime. Use the available tools when they help, and say so plainly when you cannot do something.",
    "",
    "Available tools:",
    list,
    "",
    "Guidelines:",
    "- Be concise in your responses",
    "- Show file paths clearly when working with files",
  ].join("\n");
}

/**
 * Builds the system prompt (see the module contract).
 * @throws HarnessConfigError when a `systemPrompt` function throws or returns a non-string.
 * @example
 * buildSystemPrompt({ systemPrompt: ({ date }) => `Today is ${date}.`, tools: [], skills: [], cwd: "/" });
 */
export function buildSystemPrompt(input: BuildSystemPromptInput): string {
  const date = localDate(input.now ?? new Date());
  const cwd = input.cwd.replace(/\\/g, "/");
  if (typeof input.systemPrompt === "function") {
    const skills = input.skills.filter((skill) => !skill.disableModelInvocation);
    let prompt: unknown;
    try {
      prompt = input.systemPrompt({ tools: input.tools.map(({ name, description }) => ({ name, description })), skills, cwd: input.cwd, date, contextFiles: [...(input.contextFiles ?? [])] });
    } catch (error) {
      throw new HarnessConfigError(`Invalid harness option "systemPrompt": the function threw: ${(error as Error).message}`, {
        cause: error,
        details: { field: "systemPrompt" },
      });
    }
    if (typeof prompt !== "string") {
      throw new HarnessConfigError(`Invalid harness option "systemPrompt": the function returned ${typeof prompt}, expected a string`, {
        details: { field: "systemPrompt" },
      });
    }
    return prompt;
  }
  let prompt = input.systemPrompt ? input.systemPrompt : defaultPrompt(input.tools);
  prompt += formatContextFiles(input.contextFiles ?? []);
  if (input.tools.some((tool) => tool.name === "read")) prompt += formatSkillsForSystemPrompt(input.skills);
  prompt += `\nCurrent date: ${date}`;
  prompt += `\nCurrent working directory: ${cwd}`;
  return prompt;
}

/**
 * The system prompt of a harness run.
 *
 * Contract (layout pi's `buildSystemPrompt`, `docs/pi-parity.md`; the
 * default wording is ours):
 * - a **string** option is pi's custom prompt: the string, then the `# Project Context` section
 *   of `contextFiles` (`context-files.ts`; AGENTS.md/CLAUDE.md), then the skills catalog
 *   (`formatSkillsForSystemPrompt`) when a tool named `read` is active and a skill is
 *   model-invocable, then `\nCurrent date: YYYY-MM-DD` and `\nCurrent working directory: <cwd>`
 *   (byte-identical to pi 0.73.1 for the same inputs);
 * - a **function** option owns the whole prompt: it receives {tools, skills, cwd, date} (skills
 *   already filtered to model-invocable ones) and its string is used verbatim; a non-string
 *   return throws `HarnessConfigError` naming `systemPrompt`;
 * - no option: Arbor's short default (role, the active tools with the first line of their
 *   description), then the same context section, catalog, date and cwd lines as a string option;
 * - the date is local time, like pi's.
 *
 * @example
 * ```ts
 * buildSystemPrompt({ systemPrompt: "You review code.", tools: [{ name: "read", description: "Read a file" }], skills, cwd: "/repo" });
 * ```
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

/**
 * Formats a date as `YYYY-MM-DD` in local time (pi's format).
 *
 * @example
 * ```ts
 * localDate(new Date(2026, 10, 30)); // "2026-11-30"
 * ```
 */
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
 *
 * @throws HarnessConfigError when a `systemPrompt` function throws or returns a non-string.
 * @example
 * ```ts
 * buildSystemPrompt({ systemPrompt: ({ date }) => `Today is ${date}.`, tools: [], skills: [], cwd: "/" });
 * ```
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
